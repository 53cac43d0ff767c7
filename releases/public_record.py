"""Who may write a release's public record: the scoring service, inside ``writing()``.

A published release shows leaderboard results (runs, their samples and scores; the same for
question runs) and errata. The database guards them (migration 0013): a result is written
only inside ``writing()``, a completed run never changes, a failed run never becomes completed
by an edit (the service runs it again: queued, running, then completed by the service), an
erratum is never edited or deleted (a correction is a new, signed erratum) and only freezing
the version that fixes one records it as fixed.

``writing()`` marks the current transaction as the service's. On PostgreSQL it sets the
transaction-local setting ``benchforge.public_record`` that the triggers read; on SQLite
(``make demo``) the triggers call the SQL function ``benchforge_public_record()``, which this
module registers on every Django connection (another SQLite client has no such function, so
its writes to these tables fail).

The mark tells the scoring service's own writes from every other path (the admin, a shell's
``QuerySet.update()``, ad-hoc SQL, a bug elsewhere): none of them can produce or change a
result. It is not a secret: code running inside the application's process can do whatever
the service does, and the database's owner can switch triggers off. docs/security.md.
"""

from __future__ import annotations

import contextlib
import threading

from django.db import DEFAULT_DB_ALIAS, connections, transaction

SETTING = "benchforge.public_record"
SQLITE_FUNCTION = "benchforge_public_record"

_local = threading.local()


def _mark(connection, on: bool) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config(%s, %s, true)", [SETTING, "on" if on else ""])


@contextlib.contextmanager
def writing(using: str = DEFAULT_DB_ALIAS):
    """The scoring service writes a result (a run's samples or its completion, an erratum's
    "fixed in"): inside one transaction, marked as the service's. The mark ends with the
    block (and with its rollback, should the block fail)."""
    connection = connections[using]
    with transaction.atomic(using=using):
        _mark(connection, True)
        _local.depth = getattr(_local, "depth", 0) + 1
        try:
            yield
        finally:
            _local.depth -= 1
        _mark(connection, False)


def _sqlite_marked() -> int:
    return 1 if getattr(_local, "depth", 0) > 0 else 0


def register_sqlite_function(sender, connection, **kwargs) -> None:
    """``connection_created`` receiver: SQLite's triggers ask ``benchforge_public_record()``."""
    if connection.vendor == "sqlite":
        connection.connection.create_function(SQLITE_FUNCTION, 0, _sqlite_marked)
