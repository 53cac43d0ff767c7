"""The statistics behind levels with evidence: the Wilson score interval of a pass rate and the
number of panel attempts from which a difficulty level can always be proven. Pure functions of
counts and thresholds (the acceptance rule in ``accept.py`` and the settings' validation in
``config.py`` both read them)."""

from __future__ import annotations

import math
from statistics import NormalDist


def wilson_interval(passes: int, attempts: int, confidence: float) -> tuple[float, float]:
    """The Wilson score interval for a binomial pass rate (two-sided, ``confidence`` e.g. 0.95).

    Unlike the normal approximation it stays inside [0, 1] and is honest at 0/n and n/n, which
    is where a small panel lives: 8/8 gives about [0.68, 1.0], 7/8 about [0.53, 0.98]."""
    if attempts <= 0:
        return 0.0, 1.0
    p = passes / attempts
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    z2 = z * z
    denominator = 1 + z2 / attempts
    center = (p + z2 / (2 * attempts)) / denominator
    margin = z * ((p * (1 - p) / attempts + z2 / (4 * attempts * attempts)) ** 0.5) / denominator
    return max(0.0, center - margin), min(1.0, center + margin)


# The most pooled attempts ``attempts_to_prove`` looks through: far beyond any panel's budget,
# reached only by level thresholds so close together that a level's band is a sliver.
MAX_PROOF_ATTEMPTS = 100_000


def attempts_to_prove(level: int, confidence: float, thresholds) -> int:
    """The fewest pooled panel attempts from which on ``level`` can always be proven at
    ``confidence``: at this count and at every larger one, some pass count has its point
    estimate in the level's band of phi and its Wilson upper bound mapping to that level. At
    95% with the default phi: levels 2-5 need 14, 14, 14 and 35 attempts (0/35 proves level 5;
    0/16 proves only level 4). Below it a count may happen to work (7/10 proves level 2, while
    no pass count of 11, 12 or 13 does): the cap must not depend on such luck.

    At each count the smallest pass count in the band is tried (it has the lowest upper bound).
    The scan ends once a pass count one above the band's lower edge would be proven too: from
    there on the band is wider than the interval and every count works.

    Raises ValueError when that takes more than ``MAX_PROOF_ATTEMPTS`` attempts."""
    thresholds = list(thresholds)
    if not 1 <= level <= len(thresholds) + 1:
        raise ValueError(f"no level {level}")
    if level == 1:
        return 1
    lower = thresholds[level - 1] if level <= len(thresholds) else 0.0
    upper_limit = thresholds[level - 2]
    first = None
    for n in range(1, MAX_PROOF_ATTEMPTS + 1):
        x = math.ceil(lower * n - 1e-12)
        proven = x / n < upper_limit and wilson_interval(x, n, confidence)[1] < upper_limit
        if not proven:
            first = None
            continue
        first = first or n
        edge = min(lower * n + 1, n) if level <= len(thresholds) else 0
        if wilson_interval(edge, n, confidence)[1] < upper_limit:
            return first
    raise ValueError(
        f"level {level} cannot be proven at {confidence:.1%} confidence within "
        f"{MAX_PROOF_ATTEMPTS} attempts: its band of level_thresholds is too narrow"
    )
