"""The leaderboard at LiveCodeBench's scale (issue #36): a bootstrap interval over 1,000 problems
sums in numpy and only the resamples next to its bounds exactly, with the intervals of drawing
``random.choices`` every time; the board reads each run's top-level figures and, for a date
window, its per-problem arrays (``LeaderboardRunFigures``), never the whole summary, with the
numbers of the whole summary."""

from __future__ import annotations

import math
import random
from datetime import date

import numpy as np
import pytest
from django.core.cache import cache

from releases.leaderboard import board, stats, summaries
from releases.models import LeaderboardRun, LeaderboardRunFigures

from .board_world import board_world
from .test_stats import bootstrap_by_choices as _by_choices


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


def _decoding(monkeypatch, model, name: str) -> list:
    """Every value of ``model.name`` decoded from the database, appended as it is."""
    field = model._meta.get_field(name)
    decoded = []
    real = field.from_db_value

    def counting(value, expression, connection):
        decoded.append(value)
        return real(value, expression, connection)

    monkeypatch.setattr(field, "from_db_value", counting)
    return decoded


@pytest.mark.django_db
def test_a_model_filter_decodes_only_the_shown_runs_per_problem_values(monkeypatch):
    world = board_world()
    cache.clear()
    decoded = _decoding(monkeypatch, LeaderboardRunFigures, "problems")
    shown = board.build(release=world.release, model="model-a", after=date(2024, 1, 1))
    assert [r["model"] for r in shown.rows] == ["model-a"]
    assert shown.models == ["model-a", "model-b"]
    assert len(decoded) == 1
    decoded.clear()
    cache.clear()
    every = board.build(release=world.release, after=date(2024, 1, 1))
    assert len(every.rows) == 2 and len(decoded) == 2


@pytest.mark.django_db
def test_the_plain_board_reads_no_per_problem_values_and_a_window_no_summary(monkeypatch):
    """The plain board reads each run's top-level figures only; a date window reads the
    per-problem arrays of the runs the cache lacks, never a run's whole summary."""
    world = board_world()
    cache.clear()
    summaries_read = _decoding(monkeypatch, LeaderboardRun, "summary")
    arrays_read = _decoding(monkeypatch, LeaderboardRunFigures, "problems")
    plain = board.build(release=world.release)
    assert len(plain.rows) == 2 and plain.rows[0]["pass1"]["value"] > 0
    assert summaries_read == [] and arrays_read == []
    windowed = board.build(release=world.release, after=date(2024, 1, 1))
    assert summaries_read == [] and len(arrays_read) == 2
    assert all(r["windowed"] for r in windowed.rows)
    arrays_read.clear()
    board.build(release=world.release, after=date(2024, 1, 1))  # from the shared cache
    assert arrays_read == []


def _old_board_rows(release, after):
    """The rows as the board computed them before the figures were stored apart: from every
    run's whole summary (``board._window_request`` and ``board._windowed_many`` on it)."""
    items = {
        i.public_id: (i.created_on.date() if i.created_on else None) for i in release.items.all()
    }
    rows = {}
    for run in release.runs.filter(state="completed"):
        s = summaries.readable(run.summary)
        request = board._window_request(run, s, items, after, set())
        windowed = board._windowed_many([request])[0] if request else None
        rows[run.label] = board._row(run, s, after, windowed)
    return rows


@pytest.mark.django_db
def test_the_boards_numbers_are_those_of_the_whole_summaries():
    world = board_world()
    for after in (None, date(2024, 1, 1), date(2024, 6, 1)):
        cache.clear()
        before = _old_board_rows(world.release, after)
        cache.clear()
        now = {r["model"]: r for r in board.build(release=world.release, after=after).rows}
        assert set(now) == set(before)
        for label, row in before.items():
            for key in ("pass1", "passk", "clean", "flagged", "breakdown", "avgk", "bestk"):
                assert now[label][key] == row[key], (after, label, key)
    # A thousand problems: the stored arrays give every estimate of the whole rows.
    rng = random.Random(4)
    per_item = [
        {
            "public_id": f"p{i}",
            "origin": rng.choice(["seed", "evolved"]),
            "difficulty": rng.choice(["easy", "hard", None]),
            "n": 10,
            "c": (c := rng.randint(0, 10)),
            "contaminated": rng.choice([True, False, None]),
            "pass": {"1": c / 10, "2": rng.random(), "10": float(c > 0)},
        }
        for i in range(1000)
    ]
    estimate = {"value": 0.5, "low": 0.4, "high": 0.6, "n": 1000}
    summary = {"k": [1, 2, 10], "pass": {"1": estimate}, "pass_fail_problems": 1000}
    summary["per_item"] = per_item
    top, problems = board.figures_of(summary)
    assert "per_item" not in top
    keep = {f"p{i}" for i in range(0, 1000, 3)}
    whole = board._window_plan(summary, keep, "10", set(), whole_columns := [])
    stored = board._window_plan(
        board._StoredRows(problems, "10"), keep, "10", set(), stored_columns := []
    )
    assert whole == stored and whole_columns == stored_columns


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


def test_exact_resampled_sums_are_those_of_fsum_for_any_values():
    """``stats._ExactSums`` (integer sums of each distinct value's count) gives every
    resample's ``math.fsum(row) / n``, bit for bit, for ties, signs and wide exponents."""
    rng = random.Random(12)
    cases = [
        [rng.randint(0, 1) * 1.0 for _ in range(300)],  # pass@k of few samples: 0 or 1
        [rng.randint(0, 10) / 10 for _ in range(300)],
        [rng.choice([0.1, 0.2, 0.3, -0.3, 1e-9, 1e9, 2.0**-60]) for _ in range(97)],
        [rng.uniform(-1, 1) * 10 ** rng.randint(-300, 300) for _ in range(64)],
        [rng.random() for _ in range(211)],
        [0.0, -0.0, 0.0],
        [5e-324, 1e-310, -5e-324, 2.2e-308],  # subnormal sums
        [1.7e308, 1.7e308, -1.0],  # past the largest double
    ]
    for values in cases:
        array = np.asarray(values, dtype=np.float64)
        draws = stats._draw_rows(3, len(values), 300)
        exact = stats._ExactSums(array)
        by_fsum = []
        for row in array[draws].tolist():
            try:
                by_fsum.append(math.fsum(row) / len(values))
            except OverflowError:
                by_fsum.append(None)
        if None in by_fsum:
            with pytest.raises(OverflowError):
                exact.means(draws)
            continue
        assert exact.means(draws) == by_fsum


@pytest.mark.django_db
def test_migration_0015_gives_runs_completed_before_it_their_figures():
    """Runs completed before the figures were stored apart (their figures rows removed behind
    the guard, as before 0015) get them from their summaries, and the board is unchanged."""
    import importlib

    from django.apps import apps
    from django.db import connection

    migration = importlib.import_module("releases.migrations.0015_run_figures")
    world = board_world()
    cache.clear()
    before = [
        (r["model"], r["pass1"], r["breakdown"])
        for r in board.build(release=world.release, after=date(2024, 1, 1)).rows
    ]
    expected = {run.pk: board.figures_of(run.summary) for run in world.release.runs.all()}
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("ALTER TABLE releases_leaderboardrunfigures DISABLE TRIGGER USER")
        cursor.execute("DELETE FROM releases_leaderboardrunfigures")
        cursor.execute("ALTER TABLE releases_leaderboardrunfigures ENABLE TRIGGER USER")
    with connection.cursor() as cursor:  # 0015 fills the table before it creates the guards
        cursor.execute("ALTER TABLE releases_leaderboardrunfigures DISABLE TRIGGER USER")
        migration.fill_figures(apps, None)
        cursor.execute("ALTER TABLE releases_leaderboardrunfigures ENABLE TRIGGER USER")
    stored = {f.run_id: (f.summary, f.problems) for f in LeaderboardRunFigures.objects.all()}
    assert stored == expected and len(stored) == 2
    cache.clear()
    after = [
        (r["model"], r["pass1"], r["breakdown"])
        for r in board.build(release=world.release, after=date(2024, 1, 1)).rows
    ]
    assert after == before


@pytest.mark.django_db
def test_figures_are_written_only_as_the_run_completes():
    from django.db import IntegrityError, transaction

    from releases import public_record

    world = board_world()
    figures = LeaderboardRunFigures.objects.first()
    for attempt in (
        lambda: LeaderboardRunFigures.objects.filter(pk=figures.pk).update(summary={}),
        lambda: LeaderboardRunFigures.objects.filter(pk=figures.pk).delete(),
    ):
        for marked in (False, True):
            with pytest.raises(IntegrityError), transaction.atomic():
                if marked:
                    with public_record.writing():
                        attempt()
                else:
                    attempt()
    assert LeaderboardRunFigures.objects.filter(run__release=world.release).count() == 2
