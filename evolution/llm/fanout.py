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

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from django.conf import settings
from django.db import close_old_connections, connection, connections

from evolution.connections import drop_broken_connections

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


# Calls one step may take, in waves of its width: a step's fixed cost (claiming the stream,
# loading, working out the next action, releasing) is spread over this many waves, while a step
# that fails loses at most this many answers.
STEP_WAVES = 8


def step_calls(width: int) -> int:
    """How many independent calls a step that batches items asks for at ``width``."""
    return max(1, width) * STEP_WAVES


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

    outcomes: list = [None] * len(jobs)
    if not fans_out(width, len(jobs)):
        for i, job in enumerate(jobs):
            try:
                outcomes[i] = job()
            except Exception as exc:
                outcomes[i] = exc
    else:
        _run_in_threads(jobs, outcomes, min(width, len(jobs)))
        close_old_connections()
    if not return_exceptions:
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
    return outcomes


def _run_in_threads(jobs, outcomes: list, threads: int) -> None:
    """``threads`` threads take the jobs in input order; each keeps one database connection for
    the jobs it runs (a new one after a job saw it fail) and closes it when the queue is empty."""
    pending = iter(range(len(jobs)))
    lock = threading.Lock()

    def worker() -> None:
        try:
            while True:
                with lock:
                    i = next(pending, None)
                if i is None:
                    return
                try:
                    outcomes[i] = jobs[i]()
                except BaseException as exc:  # handed to the caller, as a Future would
                    outcomes[i] = exc
                drop_broken_connections()
        finally:
            connections.close_all()

    pool = [threading.Thread(target=worker, daemon=True) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()


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
