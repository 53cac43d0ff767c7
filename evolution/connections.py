"""Connection hygiene for work outside Django's request cycle (Celery tasks, the runner's
threads, fan-out threads): Django closes broken connections only between requests, so after a
database error each of these drops its own."""

from __future__ import annotations

import logging

from django.db import connections

log = logging.getLogger(__name__)


def drop_broken_connections() -> None:
    """Close this thread's connections that no longer work (the database restarted, the link
    was cut) or outlived ``CONN_MAX_AGE``, so that the next query opens a fresh one. A
    connection inside an atomic block is left to that block, which rolls back on its own."""
    for conn in connections.all(initialized_only=True):
        if conn.in_atomic_block:
            continue
        try:
            conn.close_if_unusable_or_obsolete()
        except Exception:  # a connection that cannot even be closed is dropped by the next
            log.debug("could not close a broken connection", exc_info=True)
