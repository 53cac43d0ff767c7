"""Parallel model calls: one step's independent calls side by side, for every kind.

A step that has several model calls whose inputs do not depend on each other's answers hands
them to ``fan_out`` as callables; they run in a pool of threads no wider than ``width`` and
their results come back in the order of the input (never of completion), so what the step
stores and decides is the same as if the calls had been made one after the other.

The width is bounded twice: by the fan-out setting (``ENGINE_FANOUT_THREADS``: each thread holds
a database connection, so workers x concurrency x this must stay well below PostgreSQL's
``max_connections``) and by the endpoints' concurrency limits (``width_for``: no more threads
than the endpoints serve at once; the limiter in ``limiter.py`` still holds every endpoint to
its limit across all workers).

Threads use connections of their own, which cannot see rows the caller has not committed: a
caller inside a transaction (``transaction.atomic``, a test's wrapping transaction) gets the
calls one after the other on its own connection.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from django.conf import settings
from django.db import close_old_connections, connection, connections

T = TypeVar("T")


def fanout_threads() -> int:
    """Threads one step may use for model calls (``ENGINE_FANOUT_THREADS``)."""
    return max(1, int(getattr(settings, "ENGINE_FANOUT_THREADS", 8)))


def width_for(*endpoints) -> int:
    """Threads for calls spread over ``endpoints``: the fan-out setting, and no more than the
    endpoints (each counted once) serve at once."""
    distinct = {e.pk: e for e in endpoints if e is not None}
    if not distinct:
        return fanout_threads()
    limit = sum(max(1, int(e.concurrency_limit)) for e in distinct.values())
    return max(1, min(fanout_threads(), limit))


def fans_out(width: int, count: int) -> bool:
    """Whether ``count`` calls at ``width`` run in threads (else one after the other)."""
    return count > 1 and width > 1 and not connection.in_atomic_block


def fan_out(
    jobs: Sequence[Callable[[], T]], width: int, *, return_exceptions: bool = False
) -> list[T | BaseException]:
    """Run ``jobs`` at most ``width`` at a time; return their results in input order.

    Every job runs to its end even when another fails. Then the first failure in input order
    is raised, or, with ``return_exceptions``, failures take their job's place in the list.
    """

    def wrap(job):
        try:
            return job()
        finally:
            connections.close_all()  # this thread's connections; the pool thread may be reused

    outcomes: list = []
    if not fans_out(width, len(jobs)):
        for job in jobs:
            try:
                outcomes.append(job())
            except Exception as exc:
                outcomes.append(exc)
    else:
        with ThreadPoolExecutor(max_workers=min(width, len(jobs))) as pool:
            futures = [pool.submit(wrap, job) for job in jobs]
            for future in futures:
                exc = future.exception()
                outcomes.append(exc if exc is not None else future.result())
        close_old_connections()
    if not return_exceptions:
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
    return outcomes


def parallel(jobs: Sequence[Callable[[], object]], width: int) -> None:
    """Run ``jobs`` (which store their own results) at most ``width`` at a time; the first
    failure in input order is raised once all have ended."""
    fan_out(jobs, width)


def raise_first(outcomes) -> None:
    """Raise the first failure of a ``fan_out(..., return_exceptions=True)`` result, once the
    answers that came back are stored: it is the step's error, and a rerun asks again only for
    what is missing."""
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
