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
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

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


# Index draws kept for reuse up to this many indices per (seed, n, resamples): 2000 resamples
# of 1,000 problems, 8 MB each, at most 12 kept.
KEPT_DRAWS = 2_000_000
_UNIT_ROUNDOFF = 2.0**-53


def _uniforms(seed: int, count: int) -> np.ndarray:
    """The first ``count`` doubles ``random.Random(seed).random()`` returns, all at once: numpy's
    legacy Mersenne Twister, given Python's generator state for the seed, makes the same ones
    (both take 53 bits from two 32-bit outputs). The doubles of the largest count asked so far
    are kept per seed (up to ``KEPT_DRAWS``): the draws for any n begin with the same doubles."""
    kept = _kept_uniforms.get(seed)
    if kept is not None and len(kept) >= count:
        return kept[:count]
    state = random.Random(seed).getstate()[1]
    generator = np.random.RandomState()
    generator.set_state(("MT19937", np.array(state[:-1], dtype=np.uint32), state[-1]))
    doubles = generator.random_sample(count)
    if count <= KEPT_DRAWS:
        doubles.setflags(write=False)
        with _kept_lock:
            if len(_kept_uniforms) >= 4 and seed not in _kept_uniforms:
                _kept_uniforms.pop(next(iter(_kept_uniforms)))
            _kept_uniforms[seed] = doubles
    return doubles


_kept_uniforms: dict[int, np.ndarray] = {}
_kept_lock = threading.Lock()


def forget_kept() -> None:
    """Drop every kept draw (a cold start, for the benchmarks)."""
    with _kept_lock:
        _kept_uniforms.clear()
    _kept_draws.cache_clear()
    _kept_weights.cache_clear()


def _draw_rows(seed: int, n: int, resamples: int) -> np.ndarray:
    """The resampled indices, one row per resample: exactly the draws
    ``random.Random(seed).choices(values, k=n)`` makes ``resamples`` times
    (``floor(random() * n)`` each), which depend only on the seed and n."""
    doubles = _uniforms(seed, resamples * n).reshape(resamples, n)
    return np.floor(doubles * float(n)).astype(np.int32)


@functools.lru_cache(maxsize=12)
def _kept_draws(seed: int, n: int, resamples: int) -> np.ndarray:
    draws = _draw_rows(seed, n, resamples)
    draws.setflags(write=False)
    return draws


def _draws(seed: int, n: int, resamples: int) -> np.ndarray:
    """The resampled indices (``_draw_rows``). Small ones are kept, so every estimate over n
    problems with that seed (every leaderboard column of the same size) reuses them."""
    if n * resamples <= KEPT_DRAWS:
        return _kept_draws(seed, n, resamples)
    return _draw_rows(seed, n, resamples)


class _ExactSums:
    """Exact resampled sums of ``values``, each what ``math.fsum`` gives for its resample (the
    correctly rounded sum), without summing a list per resample. A resample's exact sum is the
    count of each distinct value in it times that value; every distinct value is an integer
    times ``2**exponent``, split into 30-bit limbs, so the sum is an integer product of the
    counts with the limbs (int64: every partial sum stays below ``n * 2**30``), rounded to a
    double once (``float(int)`` rounds correctly, half to even, as ``fsum`` does). Values it
    cannot hold so (not finite, too wide a range of exponents) and sums near the ends of the
    double range are summed with ``math.fsum`` instead."""

    LIMB = 30
    MAX_BITS = 1_200

    def __init__(self, values: np.ndarray):
        self.values = values
        self.parts = None
        if len(values) >= 2**32 or not np.all(np.isfinite(values)):
            return
        distinct, self.inverse = np.unique(values, return_inverse=True)
        scaled = []  # (integer, exponent) of each distinct value: integer * 2**exponent
        for value in distinct.tolist():
            mantissa, exponent = math.frexp(value)
            scaled.append((int(mantissa * 2.0**53), exponent - 53))
        exponents = [exponent for integer, exponent in scaled if integer]
        if not exponents:
            return
        self.exponent = min(exponents)
        integers = [i << (e - self.exponent) if i else 0 for i, e in scaled]
        bits = max(abs(i).bit_length() for i in integers)
        if bits > self.MAX_BITS:
            return
        mask = 2**self.LIMB - 1
        places = range(-(-bits // self.LIMB))
        self.parts = np.array(  # distinct values x limbs, each limb signed as its value
            [
                [(-1 if i < 0 else 1) * ((abs(i) >> (self.LIMB * p)) & mask) for p in places]
                for i in integers
            ],
            dtype=np.int64,
        )

    def means(self, rows: np.ndarray) -> list[float]:
        """``math.fsum(values[row]) / n`` for every row of draws."""
        count, n = rows.shape
        if self.parts is None or count == 0:
            return [math.fsum(row) / n for row in self.values[rows].tolist()]
        distinct = len(self.parts)
        codes = self.inverse[rows] + (np.arange(count, dtype=np.int64) * distinct)[:, None]
        counts = np.bincount(codes.ravel(), minlength=count * distinct)
        sums = (counts.reshape(count, distinct) @ self.parts).tolist()
        out = []
        for index, limbs in enumerate(sums):
            total = 0
            for place, limb in enumerate(limbs):
                total += limb << (self.LIMB * place)
            top = abs(total).bit_length() + self.exponent
            if total and not -1020 < top < 1023:  # subnormal or past the largest double
                out.append(math.fsum(self.values[rows[index]].tolist()) / n)
            else:
                out.append(math.ldexp(float(total), self.exponent) / n)
        return out


def _order_statistic(exact: _ExactSums, draws, approx: np.ndarray, order, k: int, slack: float):
    """The k-th smallest (0-based) of the exact resampled means ``math.fsum(values[row]) / n``.

    ``approx`` (numpy's sums, within ``slack`` of the exact means; ``order`` sorts it) puts
    every resample whose approximate mean is more than ``2 * slack`` from the k-th approximate
    one surely below or above the exact k-th mean (order statistics move by at most the
    largest error); only the few left between are summed exactly (``_ExactSums``)."""
    pivot = approx[order[k]]
    below = int(np.searchsorted(approx, pivot - 2 * slack, side="left", sorter=order))
    above = int(np.searchsorted(approx, pivot + 2 * slack, side="right", sorter=order))
    return sorted(exact.means(draws[order[below:above]]))[k - below]


def _bounds(resamples: int, level: float) -> tuple[int, int]:
    alpha = 1.0 - level
    low_index = math.floor(resamples * alpha / 2)
    high_index = min(resamples - 1, math.ceil(resamples * (1 - alpha / 2)) - 1)
    return low_index, high_index


def _estimate(values: list, draws: np.ndarray, approx: np.ndarray, level: float) -> Estimate:
    """The estimate of ``values`` from numpy's resampled means ``approx`` (``draws`` rows)."""
    n = len(values)
    resamples = len(approx)
    # Any order of summing n + 1 terms errs by at most (n + 1) u times the sum of their sizes;
    # the division adds half a unit: doubled, with room to spare.
    slack = 4.0 * (n + 4) * _UNIT_ROUNDOFF * max(max(values), -min(values)) + 1e-300
    order = np.argsort(approx, kind="stable")
    low_index, high_index = _bounds(resamples, level)
    exact = _ExactSums(np.asarray(values, dtype=np.float64))
    return Estimate(
        value=math.fsum(values) / n,
        low=_order_statistic(exact, draws, approx, order, low_index, slack),
        high=_order_statistic(exact, draws, approx, order, high_index, slack),
        n=n,
    )


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
    values = list(values)
    n = len(values)
    draws = _draws(seed, n, resamples)
    approx = np.asarray(values, dtype=np.float64)[draws].sum(axis=1) / n
    return _estimate(values, draws, approx, level)


# Columns of one length summed by one matrix product from this many on (fewer: one by one).
BATCH_COLUMNS = 4


@functools.lru_cache(maxsize=4)
def _kept_weights(seed: int, n: int, resamples: int) -> np.ndarray:
    """How often each problem is drawn in each resample (resamples x n): a resampled sum of
    any column is then one row of a matrix product."""
    draws = _draws(seed, n, resamples)
    rows = np.repeat(np.arange(resamples, dtype=np.int64) * n, n)
    flat = np.bincount(rows + draws.ravel(), minlength=resamples * n)
    weights = flat.reshape(resamples, n).astype(np.float64)
    weights.setflags(write=False)
    return weights


def bootstrap_means(
    columns: Sequence[Sequence[float]],
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    level=0.95,
) -> list[Estimate]:
    """``bootstrap_mean`` of every column, the same estimates, faster for many columns of one
    length (a leaderboard's pass@1 of every model over the same problems): their resampled
    means come from one matrix product of the draw counts with the columns."""
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    out: list[Estimate | None] = [None] * len(columns)
    by_length: dict[int, list[int]] = {}
    for i, column in enumerate(columns):
        by_length.setdefault(len(column), []).append(i)
    for n, indices in by_length.items():
        if n == 0 or len(indices) < BATCH_COLUMNS or n * resamples > KEPT_DRAWS:
            for i in indices:
                out[i] = bootstrap_mean(columns[i], seed=seed, resamples=resamples, level=level)
            continue
        lists = [list(columns[i]) for i in indices]
        matrix = np.array(lists, dtype=np.float64).T  # n x columns
        means = (_kept_weights(seed, n, resamples) @ matrix) / n
        draws = _draws(seed, n, resamples)
        for j, i in enumerate(indices):
            out[i] = _estimate(lists[j], draws, np.ascontiguousarray(means[:, j]), level)
    return out
