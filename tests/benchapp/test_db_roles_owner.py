"""``db_roles`` as docs/security.md runs it: by the database's owner, who in production is no
superuser, and again after every ``migrate`` (issue: the re-run failed with "must be superuser
to alter superuser roles or change superuser attribute")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

ROOT = Path(__file__).resolve().parents[2]
ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
# Roles belong to the whole PostgreSQL cluster, which other test runs on this machine share:
# the names carry this process's id, as the scratch databases of other tests do.
OWNER, APP, DB = (f"bf_roles_{what}_{os.getpid()}" for what in ("owner", "app", "scratch"))


def _admin(*statements: str) -> None:
    with psycopg.connect(ADMIN, autocommit=True) as conn:
        for sql in statements:
            conn.execute(sql)


@pytest.fixture
def owner_database():
    _admin(
        f"DROP DATABASE IF EXISTS {DB}",
        f"DROP ROLE IF EXISTS {APP}",
        f"DROP ROLE IF EXISTS {OWNER}",
        f"CREATE ROLE {OWNER} LOGIN CREATEROLE",
        f"CREATE DATABASE {DB} OWNER {OWNER}",
    )
    with psycopg.connect(f"postgresql://{OWNER}@127.0.0.1:5432/{DB}", autocommit=True) as c:
        c.execute("CREATE TABLE release_row (id serial PRIMARY KEY, note text)")
    yield f"postgres://{OWNER}@127.0.0.1:5432/{DB}"
    _admin(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
    with psycopg.connect(ADMIN, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (APP,)).fetchone():
            conn.execute(f"DROP OWNED BY {APP}")
    _admin(f"DROP ROLE IF EXISTS {APP}", f"DROP ROLE IF EXISTS {OWNER}")


def _db_roles(url: str, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DATABASE_URL": url}
    return subprocess.run(
        [sys.executable, "manage.py", "db_roles", "--app-role", APP, *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_non_superuser_owner_runs_db_roles_again_after_a_migrate(owner_database):
    first = _db_roles(owner_database)
    assert first.returncode == 0, first.stderr
    # A migrate adds a table; the documented re-run covers it.
    with psycopg.connect(owner_database.replace("postgres://", "postgresql://")) as c:
        c.execute("CREATE TABLE added_later (id serial PRIMARY KEY)")
    again = _db_roles(owner_database)
    assert again.returncode == 0, again.stderr
    assert "rows only" in again.stdout
    check = _db_roles(owner_database, "--check")
    assert check.returncode == 0, check.stderr
