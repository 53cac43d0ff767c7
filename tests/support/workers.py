"""Real Celery worker processes for tests that kill them: each worker runs in its own process
group against the test database and the test Redis, with short ticks and leases."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def worker_env(*, lease_seconds: float = 4) -> dict:
    db = connection.settings_dict
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.pop("CELERY_BROKER", None)  # Celery's CLI would read it as a broker URL
    env.update(
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
        BROKER_KIND="redis",
        REDIS_URL=settings.REDIS_URL,
        CAMPAIGN_TICK_SECONDS="0.5",
        LINEAGE_LEASE_SECONDS=str(lease_seconds),
        SECRET_KEY="test",
        DEBUG="0",
        DJANGO_SETTINGS_MODULE="benchapp.settings",
    )
    if db.get("PASSWORD"):
        env["PGPASSWORD"] = db["PASSWORD"]
    return env


def start_worker(
    name: str,
    *,
    pool_args: tuple[str, ...] = ("-c", "2"),
    lease_seconds: float = 4,
    queues: str = "default,sandbox",
    env: dict | None = None,
    log_path: Path | None = None,
) -> subprocess.Popen:
    """``env``: the whole environment (default ``worker_env``); ``log_path``: where its output
    goes (default: this process's)."""
    out = open(log_path, "ab") if log_path else None  # noqa: SIM115 - the child holds it
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "benchapp", "worker", "-Q", queues, *pool_args]
            + ["-n", f"{name}@%h", "--loglevel", "WARNING", "--without-gossip", "--without-mingle"],
            cwd=ROOT,
            env=env if env is not None else worker_env(lease_seconds=lease_seconds),
            start_new_session=True,  # its own process group: kill -9 takes the pool children too
            stdout=out,
            stderr=subprocess.STDOUT if out else None,
        )
    finally:
        if out:
            out.close()


def kill_group(proc: subprocess.Popen, sig=signal.SIGKILL) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        return
    proc.wait(timeout=30)


def other_sessions(condition: str = "true") -> int:
    """Sessions on the test database besides this connection's that match ``condition`` (SQL
    over ``pg_stat_activity``, e.g. ``wait_event_type = 'Lock'``)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            f" AND pid <> pg_backend_pid() AND ({condition})"
        )
        return cursor.fetchone()[0]


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def wait_until_consuming(queues=("default", "sandbox"), timeout: float = 120) -> None:
    """Block until a worker has declared its queues in Redis (it is then consuming).

    (A message published to ``default`` after a flush of Redis still reached that queue when
    tried here, with no binding left and a stale declaration cache. The first message of
    the living re-measurement test that was lost in the long test process had gone to another
    broker altogether: see ``tests/conftest.py::_broker_setting_survives``.)"""
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL)
    wait_for(
        lambda: all(client.exists(f"_kombu.binding.{q}") for q in queues),
        timeout,
        f"a worker consuming {', '.join(queues)}",
    )
