"""Gives each pytest-xdist worker (``make test`` runs two) what the suite's tests must not share.

Loaded with ``-p tests.shards``, before pytest-django reads the settings: a worker's Django
settings then come from this process's environment with, for worker ``gwN`` (N > 0), the Redis
database index moved up by N and ``BENCHFORGE_DATA_DIR`` suffixed ``-gwN``. The test database
is pytest-django's (``test_<name>_gwN`` under xdist). Worker ``gw0`` and a run without xdist
keep the environment as it is.

What would otherwise be shared: Redis (the Celery queues of the real workers the tests start,
and the tests that flush their index), and the data directory (the file broker's spool, the
recordings, X-Coder's temporary files). Tests that need another Redis index take the one
eight above theirs (``tests/deploy/test_production_rehearsal.py``), so up to eight workers
never meet.
"""

from __future__ import annotations

import os
from urllib.parse import urlparse, urlunparse


def worker_number() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0


def shard_environment(environ: dict, number: int) -> dict:
    """The settings ``environ`` gives worker ``number`` (changed only for number > 0)."""
    if number <= 0:
        return {}
    changed = {}
    redis = environ.get("REDIS_URL")
    if redis:
        parsed = urlparse(redis)
        index = int((parsed.path or "/0").strip("/") or 0)
        if index + number >= 8:
            raise RuntimeError(
                f"REDIS_URL index {index} leaves no room for xdist worker gw{number} below 8"
            )
        changed["REDIS_URL"] = urlunparse(parsed._replace(path=f"/{index + number}"))
    data_dir = environ.get("BENCHFORGE_DATA_DIR")
    if data_dir:
        changed["BENCHFORGE_DATA_DIR"] = f"{data_dir.rstrip('/')}-gw{number}"
    return changed


os.environ.update(shard_environment(dict(os.environ), worker_number()))
