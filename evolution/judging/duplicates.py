"""The cheap lexical near-duplicate check every method runs before any model is asked: Jaccard
similarity of word 3-shingles against the earlier texts (BenchEvolver's judge, X-Coder's
statement gate, EvoSyn's synthesized problems, the release gate)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_WORD = re.compile(r"[a-z0-9]+")


def shingles(text: str, size: int = 3) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    if len(words) < size:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of word 3-shingles: 1.0 identical wording, ~0 unrelated."""
    sa, sb = shingles(a), shingles(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


@dataclass
class DuplicateCheck:
    duplicate: bool
    score: float
    against: str  # label of the closest earlier text


def near_duplicate(text: str, earlier: dict[str, str], threshold: float) -> DuplicateCheck:
    best_label, best = "", 0.0
    for label, other in earlier.items():
        score = similarity(text, other)
        if score > best:
            best_label, best = label, score
    return DuplicateCheck(duplicate=best >= threshold, score=round(best, 4), against=best_label)
