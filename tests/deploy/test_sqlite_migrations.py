"""``make demo`` migrates an embedded SQLite database from nothing: every migration must apply
there too, and the immutability triggers written for SQLite must survive the table rebuilds
SQLite uses to add columns (a rebuild drops the triggers on the rebuilt table)."""

from __future__ import annotations

import importlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

TRIGGER_MIGRATIONS = [
    "releases.migrations.0002_frozen_release_triggers",
    "releases.migrations.0003_release_questions",
    "releases.migrations.0004_published_identity_runs_truncate_guards",
    "releases.migrations.0013_public_record_guards",
]


@pytest.mark.slow
def test_every_migration_applies_to_a_fresh_sqlite_database_and_keeps_its_triggers(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(DEBUG="1", BENCHFORGE_DATA_DIR=str(tmp_path), BROKER_KIND="filesystem")
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]

    with sqlite3.connect(tmp_path / "benchforge.sqlite3") as db:
        triggers = {
            name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        }
    expected = {
        name
        for module in TRIGGER_MIGRATIONS
        for name in importlib.import_module(module).SQLITE_NAMES
    }
    expected.add("evolution_campaign_started_at_kept")
    assert expected - triggers == set()

    # The public record's rules hold on SQLite too, for a client other than the application:
    # no run is born completed, no erratum unsigned, and samples need the scoring service's
    # mark, a function only the application's connections have.
    with sqlite3.connect(tmp_path / "benchforge.sqlite3") as db:
        for sql, message in (
            (
                "INSERT INTO releases_leaderboardrun (release_id, source, label, "
                "samples_per_problem, bootstrap_seed, state, error, summary, created_at, claim, "
                "lost_workers, recovery) VALUES (1, 'upload', 'Forged-Model-X', 1, 0, "
                "'completed', '', '{\"pass\": {}}', '2025-01-01', '', 0, '')",
                "created queued",
            ),
            (
                "INSERT INTO releases_erratum (release_id, item_public_id, kind, description, "
                "resolution, signed_by, created_at) VALUES (1, 'x', 'tests', 'd', '', '', "
                "'2025-01-01')",
                "signed",
            ),
            (
                "INSERT INTO releases_leaderboardsample (run_id, item_id, sample_index, code, "
                "verdict, passed_tests, total_tests, details, created_at) VALUES "
                "(1, 1, 0, '', 'AC', 1, 1, '{}', '2025-01-01')",
                "benchforge_public_record",
            ),
        ):
            with pytest.raises(sqlite3.DatabaseError, match=message):
                db.execute(sql)
