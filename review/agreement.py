"""Inter-rater agreement, as pure functions over plain data (no database, no dependency).

- ``krippendorff_alpha``: any number of raters per unit, missing ratings allowed; ordinal
  (default), interval or nominal metric. Krippendorff, "Computing Krippendorff's
  Alpha-Reliability" (2011): alpha = 1 - D_o / D_e over the coincidence matrix.
- ``weighted_cohen_kappa``: two raters, ordered categories, linear or quadratic weights.

Both return ``None`` when agreement is undefined (too little data or no variation at all),
never a made-up number.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from itertools import permutations


def coincidences(units: Iterable[Sequence[Hashable]]) -> dict[tuple, float]:
    """The coincidence matrix o_ck: each unit with m >= 2 values adds 1/(m-1) per ordered pair."""
    matrix: Counter = Counter()
    for unit in units:
        values = [v for v in unit if v is not None]
        m = len(values)
        if m < 2:
            continue  # a lone rating cannot be paired: it carries no agreement information
        for c, k in permutations(values, 2):
            matrix[(c, k)] += 1.0 / (m - 1)
    return dict(matrix)


def _delta2(metric: str, values: list, n: dict) -> dict[tuple, float]:
    """Squared distance between every two values under the metric."""
    table: dict[tuple, float] = {}
    for i, c in enumerate(values):
        for j, k in enumerate(values):
            if metric == "nominal":
                d = 0.0 if c == k else 1.0
            elif metric == "interval":
                d = float(c - k) ** 2
            elif metric == "ordinal":
                lo, hi = min(i, j), max(i, j)
                between = sum(n[values[g]] for g in range(lo, hi + 1))
                d = (between - (n[c] + n[k]) / 2.0) ** 2
            else:
                raise ValueError(f"metric must be nominal, ordinal or interval, got {metric!r}")
            table[(c, k)] = d
    return table


def krippendorff_alpha(
    units: Iterable[Sequence[Hashable]], *, metric: str = "ordinal"
) -> float | None:
    """Krippendorff's alpha over ``units`` (each a sequence of the ratings one unit got).

    ``None`` values are missing ratings. Returns None when fewer than two pairable values
    exist or when every pairable value is the same (expected disagreement is zero).
    """
    o = coincidences(units)
    if not o:
        return None
    n_c: Counter = Counter()
    for (c, _k), weight in o.items():
        n_c[c] += weight
    n = sum(n_c.values())
    values = sorted(n_c)
    if len(values) < 2 or n <= 1:
        return None
    d2 = _delta2(metric, values, n_c)
    observed = sum(weight * d2[pair] for pair, weight in o.items())
    expected = sum(n_c[c] * n_c[k] * d2[(c, k)] for c in values for k in values)
    if expected == 0:
        return None
    return 1.0 - (n - 1) * observed / expected


def weighted_cohen_kappa(
    pairs: Iterable[tuple[Hashable, Hashable]],
    *,
    categories: Sequence[Hashable],
    weights: str = "quadratic",
) -> float | None:
    """Weighted Cohen's kappa for two raters over ordered ``categories``.

    kappa_w = 1 - sum(w_ij * o_ij) / sum(w_ij * e_ij), with o the observed proportions,
    e the product of the two raters' marginals and w_ij = |i-j| (linear) or (i-j)^2
    (quadratic) on category positions. Returns None without pairs or when the expected
    disagreement is zero (both raters used a single, identical category throughout).
    """
    if weights not in ("linear", "quadratic"):
        raise ValueError(f"weights must be linear or quadratic, got {weights!r}")
    index = {c: i for i, c in enumerate(categories)}
    pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
    if not pairs:
        return None
    for a, b in pairs:
        if a not in index or b not in index:
            raise ValueError(f"rating outside the categories: {(a, b)!r}")
    total = len(pairs)
    observed = Counter((index[a], index[b]) for a, b in pairs)
    first = Counter(index[a] for a, _ in pairs)
    second = Counter(index[b] for _, b in pairs)
    power = 1 if weights == "linear" else 2
    k = len(categories)
    num = den = 0.0
    for i in range(k):
        for j in range(k):
            w = abs(i - j) ** power
            if not w:
                continue
            num += w * observed[(i, j)] / total
            den += w * (first[i] / total) * (second[j] / total)
    if den == 0:
        return None
    return 1.0 - num / den
