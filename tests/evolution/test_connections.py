"""One connection-hygiene helper for work outside Django's request cycle: after the database
cut a connection (here: PostgreSQL terminating its backend, as a restart does), the next
query of that thread fails once; ``drop_broken_connections`` closes the dead connection, and
the query after it opens a fresh one. A connection inside an atomic block is left alone."""

from __future__ import annotations

import psycopg
import pytest
from django.db import DatabaseError, connection, transaction

from evolution.connections import drop_broken_connections

pytestmark = pytest.mark.django_db(transaction=True)


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _terminate(pid: int) -> None:
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])


def test_a_connection_the_database_cut_is_dropped_and_the_next_query_reconnects():
    before = _backend_pid()
    _terminate(before)
    with pytest.raises(DatabaseError):
        _backend_pid()
    drop_broken_connections()
    assert connection.connection is None  # closed: the next query opens a fresh one
    assert _backend_pid() != before


def test_a_working_connection_and_one_inside_an_atomic_block_are_kept():
    pid = _backend_pid()
    drop_broken_connections()
    assert _backend_pid() == pid
    with transaction.atomic():
        connection.errors_occurred = True
        drop_broken_connections()
        assert connection.connection is not None
        assert _backend_pid() == pid
