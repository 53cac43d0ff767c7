"""The leaderboard at LiveCodeBench's scale (issue #36): a bootstrap interval over 1,000 problems
sums in numpy and only the resamples next to its bounds exactly, with the intervals of drawing
``random.choices`` every time; a model filter decodes only the shown runs' summaries."""

from __future__ import annotations

import math
import random
from datetime import date

import pytest

from releases import board, stats
from releases.models import LeaderboardRun

from .board_world import board_world
from .test_stats import _bootstrap_by_choices as _by_choices


def test_an_interval_over_a_thousand_problems_sums_few_resamples_exactly(monkeypatch):
    rng = random.Random(36)
    # pass@1 of 10 samples (many equal means) and continuous values (none equal).
    for values in (
        [rng.randint(0, 10) / 10 for _ in range(1000)],
        [rng.random() for _ in range(1055)],
    ):
        stats._kept_draws.cache_clear()
        exact_sums = []
        fsum = math.fsum

        def counted(iterable, exact_sums=exact_sums, fsum=fsum):
            exact_sums.append(1)
            return fsum(iterable)

        monkeypatch.setattr(stats.math, "fsum", counted)
        estimate = stats.bootstrap_mean(values, seed=4)
        monkeypatch.setattr(stats.math, "fsum", fsum)
        assert (estimate.value, estimate.low, estimate.high) == _by_choices(values, 4)
        # The mean, then the resamples tied with the two bounds: not all 2,000.
        assert len(exact_sums) < 100


def test_the_draws_are_those_of_random_choices_for_any_seed():
    for seed in (0, 1, 7, 2**33 + 1):
        rng = random.Random(seed)
        expected = [[math.floor(rng.random() * 13.0) for _ in range(13)] for _ in range(30)]
        assert stats._draw_rows(seed, 13, 30).tolist() == expected


@pytest.mark.django_db
def test_a_model_filter_decodes_only_the_shown_runs_summaries(monkeypatch):
    world = board_world()
    field = LeaderboardRun._meta.get_field("summary")
    decoded = []
    real = field.from_db_value

    def counting(value, expression, connection):
        decoded.append(value)
        return real(value, expression, connection)

    monkeypatch.setattr(field, "from_db_value", counting)
    shown = board.build(release=world.release, model="model-a", after=date(2024, 1, 1))
    assert [r["model"] for r in shown.rows] == ["model-a"]
    assert shown.models == ["model-a", "model-b"]
    assert len(decoded) == 1
    decoded.clear()
    every = board.build(release=world.release, after=date(2024, 1, 1))
    assert len(every.rows) == 2 and len(decoded) == 2


def test_many_columns_get_the_estimates_of_one_by_one():
    rng = random.Random(9)
    columns = [[rng.randint(0, 10) / 10 for _ in range(200)] for _ in range(12)]
    columns += [[rng.random() for _ in range(200)] for _ in range(3)]
    columns += [[0.5] * 7, [1.0, 0.0], []]
    together = stats.bootstrap_means(columns, seed=2)
    alone = [stats.bootstrap_mean(c, seed=2) for c in columns]
    assert [(e.value, e.low, e.high, e.n) for e in together[:-1]] == [
        (e.value, e.low, e.high, e.n) for e in alone[:-1]
    ]
    assert together[-1].n == 0 and math.isnan(together[-1].value)


@pytest.mark.django_db
def test_a_date_window_estimates_every_run_in_one_batch(monkeypatch):
    world = board_world()
    calls = []
    real = board.bootstrap_means

    def counted(columns, **kwargs):
        calls.append(len(columns))
        return real(columns, **kwargs)

    monkeypatch.setattr(board, "bootstrap_means", counted)
    seeds = set(world.release.runs.values_list("bootstrap_seed", flat=True))
    windowed = board.build(release=world.release, after=date(2024, 1, 1))
    assert len(windowed.rows) == 2
    assert len(calls) == len(seeds)
    calls.clear()
    assert board.build(release=world.release, after=date(2024, 1, 1)).rows == windowed.rows
    assert calls == []  # kept in the cache
