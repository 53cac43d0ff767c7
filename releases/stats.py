"""Leaderboard statistics: the unbiased pass@k estimator and seeded bootstrap intervals.

pass@k for one problem with n samples of which c pass (Chen et al., 2021, as LiveCodeBench
computes it): 1 - C(n-c, k) / C(n, k), evaluated as a running product so large n does not
overflow. A benchmark score is the mean over problems; its 95% interval comes from
resampling PROBLEMS with replacement (percentile bootstrap, ``random.Random(seed)``), so the
same samples and seed always give the same interval.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_RESAMPLES = 2000


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples with c correct. Needs 1 <= k <= n and 0 <= c <= n."""
    if not (0 <= c <= n) or not (1 <= k <= n):
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float
    n: int  # problems

    def to_dict(self) -> dict:
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n}


# Index draws kept for reuse up to this many indices per (seed, n, resamples): 2000
# resamples of 250 problems, about 4 MB each, 16 kept.
KEPT_DRAWS = 500_000


def _draw_rows(seed: int, n: int, resamples: int):
    rng = random.Random(seed)
    draw = rng.random
    size = float(n)
    for _ in range(resamples):
        yield tuple(math.floor(draw() * size) for _ in range(n))


@functools.lru_cache(maxsize=16)
def _kept_draws(seed: int, n: int, resamples: int) -> tuple[tuple[int, ...], ...]:
    return tuple(_draw_rows(seed, n, resamples))


def _draws(seed: int, n: int, resamples: int):
    """The resampled indices: exactly the draws ``random.Random(seed).choices(values, k=n)``
    makes ``resamples`` times (``floor(random() * n)`` each), which depend only on the seed
    and n. Small ones are kept, so every estimate over n problems with that seed (every
    leaderboard column of the same size) reuses them instead of drawing them again."""
    if n * resamples <= KEPT_DRAWS:
        return _kept_draws(seed, n, resamples)
    return _draw_rows(seed, n, resamples)


def bootstrap_mean(
    values: Sequence[float], *, seed: int = 0, resamples: int = DEFAULT_RESAMPLES, level=0.95
) -> Estimate:
    """Mean of ``values`` with a percentile-bootstrap interval over the values (problems).

    The bounds are order statistics of the sorted resampled means: the
    ``floor(resamples * alpha/2)``-th and the ``ceil(resamples * (1 - alpha/2)) - 1``-th
    (0-based), alpha = 1 - level."""
    if not values:
        return Estimate(value=math.nan, low=math.nan, high=math.nan, n=0)
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    n = len(values)
    mean = math.fsum(values) / n
    pick = values.__getitem__ if isinstance(values, list | tuple) else list(values).__getitem__
    means = sorted(math.fsum(map(pick, row)) / n for row in _draws(seed, n, resamples))
    alpha = 1.0 - level
    low_index = math.floor(resamples * alpha / 2)
    high_index = min(resamples - 1, math.ceil(resamples * (1 - alpha / 2)) - 1)
    return Estimate(value=mean, low=means[low_index], high=means[high_index], n=n)
