"""Spearman's rank correlation: the one definition the project computes it with (the living
benchmark's expert-vs-model calibration, X-Coder's judged difficulty against pass@1)."""

from __future__ import annotations

import math


def average_ranks(values: list[float]) -> list[float]:
    """1-based ranks; tied values share the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman_rho(x: list[float], y: list[float]) -> float | None:
    """Spearman's rho: Pearson's correlation of the average ranks, so ties are handled as
    scipy.stats.spearmanr handles them. None below two pairs or when one side has no spread."""
    n = len(x)
    if n != len(y):
        raise ValueError("x and y need the same length")
    if n < 2:
        return None
    rx, ry = average_ranks(list(x)), average_ranks(list(y))
    mx, my = math.fsum(rx) / n, math.fsum(ry) / n
    sxy = math.fsum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sxx = math.fsum((a - mx) ** 2 for a in rx)
    syy = math.fsum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None  # one side has no spread: no ranking to correlate
    return sxy / math.sqrt(sxx * syy)
