"""Check that PostgreSQL and Redis answer where the tests expect them; say how to start them if not."""

from __future__ import annotations

import os
import socket
import sys
from urllib.parse import urlparse


def _reachable(url: str, default_port: int) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection(
            (parsed.hostname or "127.0.0.1", parsed.port or default_port), timeout=2
        ):
            return True
    except OSError:
        return False


def main() -> int:
    problems = []
    db = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/benchforge")
    redis = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    if not _reachable(db, 5432):
        problems.append(
            f"PostgreSQL does not answer at {db}. Start it: "
            "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"
        )
    if not _reachable(redis, 6379):
        problems.append(
            f"Redis does not answer at {redis}. Start it: "
            'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no'
        )
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
