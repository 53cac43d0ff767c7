"""Idea divergence: the probability that two independent solutions use different strategies.

Two estimates (FrontierSmith, section "idea divergence"):

- model-judged: the mean over the C(n, 2) pairs of a pairwise judge's verdict (1 = different
  strategies, 0 = same);
- execution-grounded, once tests and a verifier exist: the mean over pairs of
  (1 / sqrt(m)) * ||q_i - q_j||_2, where q_i is solution i's score vector on the m tests.
"""

from __future__ import annotations

import math
from itertools import combinations


def pairs(n: int) -> list[tuple[int, int]]:
    return list(combinations(range(n), 2))


def judged_divergence(verdicts: dict[tuple[int, int], float]) -> float | None:
    """Mean of the pairwise verdicts (pairs the judge could not answer are left out)."""
    values = [v for v in verdicts.values() if v is not None]
    return sum(values) / len(values) if values else None


def execution_divergence(vectors: list[list[float]]) -> float | None:
    """Mean over pairs of ||q_i - q_j|| / sqrt(m); None with fewer than two vectors."""
    if len(vectors) < 2:
        return None
    m = len(vectors[0])
    if m == 0 or any(len(v) != m for v in vectors):
        raise ValueError("score vectors must be non-empty and of equal length")
    total = 0.0
    for a, b in combinations(vectors, 2):
        total += math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b, strict=True))) / math.sqrt(m)
    return total / math.comb(len(vectors), 2)


def top(items: list, n: int, key) -> list:
    """The ``n`` items with the highest ``key`` (None sorts last); ties keep input order."""
    ranked = sorted(enumerate(items), key=lambda p: (key(p[1]) is None, -(key(p[1]) or 0.0), p[0]))
    return [item for _, item in ranked[:n]]


def unmeasured_reason(scored: int, sampled: int) -> str:
    """Why a converged candidate has no execution divergence. Such a candidate is never
    ranked nor accepted: nothing shows its solutions' scores differ."""
    return (
        "execution divergence not measured: "
        f"{scored} of {sampled} sampled solution(s) had code to score on the tests, "
        "at least two are needed; refused rather than ranked"
    )


def describe(value: float | None) -> str:
    """An execution divergence as a decision reason shows it."""
    return "unknown (fewer than two scored solutions)" if value is None else f"{value:.4f}"
