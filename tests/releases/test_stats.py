"""pass@k and bootstrap intervals against values computed by hand."""

from __future__ import annotations

import math
import random

import pytest

from releases.leaderboard import stats
from releases.leaderboard.stats import bootstrap_mean, pass_at_k


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (4, 0, 1, 0.0),
        (4, 4, 1, 1.0),
        (4, 1, 1, 0.25),  # c/n
        (4, 2, 1, 0.5),
        (4, 1, 2, 0.5),  # 1 - C(3,2)/C(4,2) = 1 - 3/6
        (4, 2, 2, 5 / 6),  # 1 - C(2,2)/C(4,2) = 1 - 1/6
        (4, 1, 4, 1.0),  # n - c < k
        (5, 2, 3, 0.9),  # 1 - C(3,3)/C(5,3) = 1 - 1/10
        (10, 3, 5, 1 - 21 / 252),  # 1 - C(7,5)/C(10,5)
    ],
)
def test_pass_at_k_matches_the_hand_computed_unbiased_estimator(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected)
    assert pass_at_k(n, c, k) == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k))


def test_pass_at_k_refuses_impossible_counts():
    with pytest.raises(ValueError):
        pass_at_k(4, 5, 1)
    with pytest.raises(ValueError):
        pass_at_k(4, 1, 5)


def test_a_constant_score_has_a_zero_width_interval():
    est = bootstrap_mean([0.25, 0.25, 0.25], seed=1)
    assert (est.value, est.low, est.high, est.n) == (0.25, 0.25, 0.25, 3)


def test_the_interval_matches_the_hand_computed_bootstrap_distribution():
    # Problems scoring [1, 0, 0, 0]: a resampled mean is Binomial(4, 1/4) / 4, with
    # P(0) = .316, P(.25) = .422, P(.5) = .211, P(.75) = .047, P(1) = .004.
    # Cumulative: .316, .738, .949, .996 -> 2.5th percentile 0, 97.5th percentile 0.75.
    est = bootstrap_mean([1.0, 0.0, 0.0, 0.0], seed=7, resamples=20000)
    assert est.value == 0.25
    assert (est.low, est.high) == (0.0, 0.75)


def test_two_problems_give_the_full_range_at_95_percent():
    # Means 0, .5, 1 with probabilities 1/4, 1/2, 1/4: both tails exceed 2.5%.
    est = bootstrap_mean([0.0, 1.0], seed=3, resamples=4000)
    assert (est.value, est.low, est.high) == (0.5, 0.0, 1.0)


def test_the_interval_is_reproducible_for_a_seed():
    values = [0.1, 0.9, 0.4, 0.75, 0.0, 1.0, 0.3]
    assert bootstrap_mean(values, seed=11) == bootstrap_mean(values, seed=11)
    est = bootstrap_mean(values, seed=11)
    assert est.low <= est.value <= est.high


def bootstrap_by_choices(values, seed, resamples=2000, level=0.95):
    """The interval as first written: ``rng.choices`` drawn afresh for every resample."""
    n = len(values)
    rng = random.Random(seed)
    means = sorted(math.fsum(rng.choices(values, k=n)) / n for _ in range(resamples))
    alpha = 1 - level
    low = means[math.floor(resamples * alpha / 2)]
    high = means[min(resamples - 1, math.ceil(resamples * (1 - alpha / 2)) - 1)]
    return math.fsum(values) / n, low, high


def test_kept_draws_give_exactly_the_intervals_of_drawing_every_time(monkeypatch):
    rng = random.Random(5)
    for _ in range(25):
        n = rng.randint(1, 120)
        values = [rng.choice([0.0, 0.25, 0.5, 0.75, 1.0, rng.random()]) for _ in range(n)]
        seed = rng.randint(0, 4)
        e = bootstrap_mean(values, seed=seed)
        assert (e.value, e.low, e.high) == bootstrap_by_choices(values, seed)
    # Past the kept size the draws are made on the fly, with the same result.
    monkeypatch.setattr(stats, "KEPT_DRAWS", 0)
    values = [rng.random() for _ in range(40)]
    e = bootstrap_mean(values, seed=3)
    assert (e.value, e.low, e.high) == bootstrap_by_choices(values, 3)
