"""Model calls side by side: one step may fan its calls out over a few threads (each holds a
database connection, so workers x concurrency x threads must stay well below PostgreSQL's
max_connections)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings as django_settings
from django.db import close_old_connections, connections


def fanout_threads() -> int:
    """Threads one step may use for model calls (``settings.ENGINE_FANOUT_THREADS``)."""
    return int(getattr(django_settings, "ENGINE_FANOUT_THREADS", 8))


def parallel(jobs: list[Callable[[], None]], width: int) -> None:
    """Run ``jobs`` at most ``width`` at a time (each thread closes its DB connection after);
    one job or a width of one runs them in order in this thread."""

    def wrap(job):
        try:
            return job()
        finally:
            connections.close_all()

    if len(jobs) <= 1 or width <= 1:
        for job in jobs:
            job()
        return
    with ThreadPoolExecutor(max_workers=min(width, len(jobs))) as pool:
        for future in [pool.submit(wrap, job) for job in jobs]:
            future.result()
    close_old_connections()
