from __future__ import annotations

import threading
import time

from django.conf import settings


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
    """Ask every worker which queues it consumes: the workers page's own broadcast
    (``benchapp.workers``), counted per queue; every configured queue is named, with 0 when
    no worker consumes it."""
    from .workers import _broadcast, hosts_by_queue

    error = ""
    try:
        live = _broadcast(with_stats=False, timeout=timeout)
    except Exception as exc:  # a probe reports, never raises
        live, error = {}, exc.__class__.__name__
    names = hosts_by_queue(live)
    return {"queues": {q: len(h) for q, h in names.items()}, "workers": names, "error": error}


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
