"""BenchEvolver's tables are its own app's (``evolution.benchevolver.models``) while keeping the
names, rows and admin history they had as the evolution app's: the move is state-only
(``evolution`` 0012, ``benchevolver`` 0001, ``review`` 0007)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from evolution.benchevolver import models

ROOT = Path(__file__).resolve().parents[3]
MOVED = {
    "lineage": "evolution_lineage",
    "candidate": "evolution_candidate",
    "solverattempt": "evolution_solverattempt",
    "globalmemoryentry": "evolution_globalmemoryentry",
}


def test_the_models_are_benchevolvers_and_keep_their_tables():
    for model in (models.Lineage, models.Candidate, models.SolverAttempt, models.GlobalMemoryEntry):
        assert model._meta.app_label == "benchevolver"
        assert model._meta.db_table == MOVED[model._meta.model_name]


def _manage(*args, env, check=True):
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if check:
        assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


OLD_ROWS = """
from django.db import connection
from django.db.migrations.loader import MigrationLoader

apps = MigrationLoader(connection).project_state(
    ("evolution", "0011_problem_reference_provenance")
).apps
Problem = apps.get_model("evolution", "Problem")
Campaign = apps.get_model("evolution", "Campaign")
Lineage = apps.get_model("evolution", "Lineage")
seed = Problem.objects.create(
    public_id="seed-1", title="Seed", statement="s", kind="seed", harness="stdio"
)
campaign = Campaign.objects.create(name="before the move")
Lineage.objects.create(campaign=campaign, seed=seed)
"""


@pytest.mark.slow
def test_a_database_made_before_the_move_keeps_its_rows_and_admin_history(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(DEBUG="1", BENCHFORGE_DATA_DIR=str(tmp_path), BROKER_KIND="filesystem")
    _manage("migrate", "evolution", "0011_problem_reference_provenance", "--noinput", env=env)
    database = tmp_path / "benchforge.sqlite3"
    with sqlite3.connect(database) as db:
        before = dict(
            db.execute(
                "SELECT model, id FROM django_content_type WHERE app_label = 'evolution' "
                "AND model IN ('lineage', 'candidate', 'solverattempt', 'globalmemoryentry')"
            )
        )
        assert set(before) == set(MOVED)
    # A campaign with one lineage, written by the models as they stood before the move.
    _manage("shell", "-c", OLD_ROWS, env=env)

    _manage("migrate", "--noinput", env=env)

    with sqlite3.connect(database) as db:
        after = dict(
            db.execute("SELECT model, id FROM django_content_type WHERE app_label = 'benchevolver'")
        )
        stale = db.execute(
            "SELECT COUNT(*) FROM django_content_type WHERE app_label = 'evolution' "
            "AND model IN ('lineage', 'candidate', 'solverattempt', 'globalmemoryentry')"
        ).fetchone()[0]
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    # The same content type rows, relabelled: admin log entries and permissions follow them.
    assert after == before
    assert stale == 0
    assert set(MOVED.values()) <= tables
    out = _manage(
        "shell",
        "-c",
        "from evolution.benchevolver.models import Lineage; print(Lineage.objects.count())",
        env=env,
    )
    assert out.strip().splitlines()[-1] == "1"
    # Nothing is left for makemigrations to write: the models say what the migrations say.
    _manage("makemigrations", "--check", "--dry-run", env=env)
