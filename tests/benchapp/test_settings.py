"""Bad configuration stops start-up with a message naming the variable."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from benchapp.env import env_bool, env_int, parse_database_url

ROOT = Path(__file__).resolve().parents[2]


def _start(env_overrides: dict) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG")}
    env.update(env_overrides)
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "benchapp.settings"},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_it_refuses_to_start_without_secret_key_when_debug_is_off():
    result = _start({"DEBUG": "0"})
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_it_names_the_variable_of_a_malformed_boolean():
    result = _start({"DEBUG": "maybe"})
    assert result.returncode != 0
    assert "DEBUG must be a boolean" in result.stderr


def test_it_names_the_variable_of_a_malformed_database_url():
    result = _start({"DEBUG": "1", "DATABASE_URL": "mysql://x/y"})
    assert result.returncode != 0
    assert "DATABASE_URL must start with postgres://" in result.stderr


def test_it_starts_with_debug_and_defaults():
    result = _start({"DEBUG": "1", "BENCHFORGE_DATA_DIR": "/tmp/benchforge-settings-test"})
    assert result.returncode == 0, result.stderr


def test_env_int_rejects_values_below_minimum(monkeypatch):
    monkeypatch.setenv("SANDBOX_MAX_PARALLEL", "0")
    with pytest.raises(ImproperlyConfigured, match="SANDBOX_MAX_PARALLEL must be at least 1"):
        env_int("SANDBOX_MAX_PARALLEL", 2, minimum=1)
    monkeypatch.setenv("SANDBOX_MAX_PARALLEL", "two")
    with pytest.raises(ImproperlyConfigured, match="SANDBOX_MAX_PARALLEL must be an integer"):
        env_int("SANDBOX_MAX_PARALLEL", 2)


def test_env_bool_accepts_common_spellings(monkeypatch):
    for raw, expected in [("1", True), ("yes", True), ("off", False), ("", False)]:
        monkeypatch.setenv("X_FLAG", raw)
        assert env_bool("X_FLAG", True) is expected or raw == ""


def test_database_url_parsing():
    pg = parse_database_url(
        "DATABASE_URL", "postgres://u:p%40ss@db.example:6543/bench?sslmode=require"
    )
    assert pg["ENGINE"] == "django.db.backends.postgresql"
    assert (pg["USER"], pg["PASSWORD"], pg["HOST"], pg["PORT"], pg["NAME"]) == (
        "u",
        "p@ss",
        "db.example",
        "6543",
        "bench",
    )
    assert pg["OPTIONS"] == {"sslmode": "require"}
    lite = parse_database_url("DATABASE_URL", "sqlite:////tmp/x.sqlite3")
    assert lite["NAME"] == "/tmp/x.sqlite3"
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL must name a database"):
        parse_database_url("DATABASE_URL", "postgres://127.0.0.1:5432/")
