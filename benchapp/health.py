from __future__ import annotations

import threading
import time

from django.conf import settings

# The queues /healthz always names, with 0 when no worker consumes them.
WATCHED_QUEUES = ("default", "sandbox")


def broker_reachable() -> tuple[bool, str]:
    """Ask the configured Celery broker for a connection, with a short timeout."""
    from kombu import Connection

    try:
        with Connection(
            settings.CELERY_BROKER_URL,
            transport_options=settings.CELERY_BROKER_TRANSPORT_OPTIONS,
            connect_timeout=2,
        ) as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
        return True, ""
    except Exception as exc:  # any failure means "not reachable"
        return False, exc.__class__.__name__


# --------------------------------------------------------------------------- workers per queue

_workers_lock = threading.Lock()
_workers_state: dict = {"report": None, "at": 0.0, "thread": None}


def _inspect_workers(timeout: float) -> dict:
    """Ask every worker which queues it consumes (``celery inspect active_queues``)."""
    from celery import current_app

    queues = {name: 0 for name in WATCHED_QUEUES}
    names: dict[str, list[str]] = {name: [] for name in WATCHED_QUEUES}
    try:
        replies = current_app.control.inspect(timeout=timeout).active_queues() or {}
    except Exception as exc:  # a probe reports, never raises
        return {"queues": queues, "workers": names, "error": exc.__class__.__name__}
    for worker, consumed in sorted(replies.items()):
        for queue in consumed or ():
            name = queue.get("name", "")
            queues[name] = queues.get(name, 0) + 1
            names.setdefault(name, []).append(worker)
    return {"queues": queues, "workers": names, "error": ""}


def _refresh_workers() -> None:
    report = None
    try:
        report = _inspect_workers(float(settings.HEALTHZ_INSPECT_TIMEOUT_SECONDS))
    finally:
        with _workers_lock:
            if report is not None:
                _workers_state.update(report=report, at=time.monotonic())
            _workers_state["thread"] = None


def workers_per_queue() -> dict:
    """How many workers consume each queue, from a cached ``inspect active_queues``.

    The answer is at most ``HEALTHZ_WORKERS_CACHE_SECONDS`` old plus one refresh: an expired
    answer is still returned at once while one background thread asks the workers again, so a
    busy ``/healthz`` never waits for the inspect time-out (only the very first request does).
    """
    ttl = float(settings.HEALTHZ_WORKERS_CACHE_SECONDS)
    with _workers_lock:
        report, at, thread = (_workers_state[k] for k in ("report", "at", "thread"))
        stale = report is None or time.monotonic() - at > ttl
        if stale and thread is None:
            thread = threading.Thread(target=_refresh_workers, name="healthz-workers", daemon=True)
            _workers_state["thread"] = thread
            thread.start()
    if report is None and thread is not None:
        thread.join(float(settings.HEALTHZ_INSPECT_TIMEOUT_SECONDS) + 2)
        with _workers_lock:
            report, at = _workers_state["report"], _workers_state["at"]
    if report is None:
        return {"queues": {}, "workers": {}, "error": "no answer yet", "age_seconds": None}
    return {**report, "age_seconds": round(time.monotonic() - at, 1)}


def forget_workers() -> None:
    """Drop the cached answer (tests; the next call asks the workers again)."""
    with _workers_lock:
        _workers_state.update(report=None, at=0.0)
