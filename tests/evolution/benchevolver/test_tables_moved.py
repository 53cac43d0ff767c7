"""BenchEvolver's tables are its own app's (``evolution.benchevolver.models``) while keeping the
names, rows and admin history they had as the evolution app's: the move is state-only
(``evolution`` 0012, ``benchevolver`` 0001, ``review`` 0007), on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import psycopg
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


CONTENT_TYPES = """
import json
from django.contrib.contenttypes.models import ContentType
from django.db import connection

print(json.dumps({
    "types": {
        f"{t.app_label}.{t.model}": t.pk
        for t in ContentType.objects.filter(
            model__in=["lineage", "candidate", "solverattempt", "globalmemoryentry"]
        )
    },
    "tables": sorted(connection.introspection.table_names()),
}))
"""


def _content_types(env) -> dict:
    return json.loads(_manage("shell", "-c", CONTENT_TYPES, env=env).strip().splitlines()[-1])


@pytest.fixture(params=["sqlite", "postgresql"])
def database_env(request, tmp_path):
    """The environment of ``manage.py`` on a database of its own: the embedded SQLite file
    ``make demo`` uses, or a PostgreSQL database created and dropped here, as a deployment
    has."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(DEBUG="1", BENCHFORGE_DATA_DIR=str(tmp_path), BROKER_KIND="filesystem")
    if request.param == "sqlite":
        yield env
        return
    base = urlparse(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/benchforge"))
    name = f"bf_tables_moved_{os.getpid()}"
    admin_dsn = urlunparse(base._replace(path="/postgres"))
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield {**env, "DATABASE_URL": urlunparse(base._replace(path=f"/{name}"))}
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.slow
def test_a_database_made_before_the_move_keeps_its_rows_and_admin_history(database_env):
    env = database_env
    _manage("migrate", "evolution", "0011_problem_reference_provenance", "--noinput", env=env)
    before = _content_types(env)["types"]
    assert set(before) == {f"evolution.{model}" for model in MOVED}
    # A campaign with one lineage, written by the models as they stood before the move.
    _manage("shell", "-c", OLD_ROWS, env=env)

    _manage("migrate", "--noinput", env=env)

    after = _content_types(env)
    # The same content type rows, relabelled: admin log entries and permissions follow them.
    assert after["types"] == {
        name.replace("evolution.", "benchevolver."): pk for name, pk in before.items()
    }
    assert set(MOVED.values()) <= set(after["tables"])
    out = _manage(
        "shell",
        "-c",
        "from evolution.benchevolver.models import Lineage; print(Lineage.objects.count())",
        env=env,
    )
    assert out.strip().splitlines()[-1] == "1"
    # Nothing is left for makemigrations to write: the models say what the migrations say.
    _manage("makemigrations", "--check", "--dry-run", env=env)
