from __future__ import annotations

import json
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
    (``evolution.workers``), counted per queue; every configured queue is named, with 0 when
    no worker consumes it."""
    from evolution.workers import broadcast, hosts_by_queue

    error = ""
    try:
        live = broadcast(with_stats=False, timeout=timeout)
    except Exception as exc:  # a probe reports, never raises
        live, error = {}, exc.__class__.__name__
    names = hosts_by_queue(live)
    # A worker too busy to answer the broadcast in time (a loaded machine) still beats: a fresh
    # heartbeat record counts it on its queues, so a busy worker is not reported missing.
    for host, queues in _beating_workers().items():
        for queue in queues:
            hosts = names.setdefault(queue, [])
            if host not in hosts:
                hosts.append(host)
    return {"queues": {q: len(h) for q, h in names.items()}, "workers": names, "error": error}


def _beating_workers() -> dict[str, list[str]]:
    """{host name: queues} of the workers whose heartbeat record is fresh (``evolution.workers``:
    written on every worker heartbeat) and that did not stop."""
    from evolution.workers import STALE_AFTER_SECONDS, store

    now = time.time()
    try:
        records = store.read()
    except Exception:  # the broker is down: the broadcast's error already says so
        return {}
    return {
        r["hostname"]: list(r.get("queues") or [])
        for r in records
        if r.get("hostname")
        and not r.get("stopped")
        and now - r.get("heartbeat", 0) <= STALE_AFTER_SECONDS
    }


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
    """Drop the cached worker answer and the cached ``/healthz`` report (tests; the next
    request checks again and asks the workers again)."""
    with _workers_lock:
        _workers_state.update(report=None, at=0.0)
    with _report_lock:
        thread = _report_state["thread"]
        _report_state.update(answer=None, at=0.0)
    if thread is not None:
        thread.join(10)


# --------------------------------------------------------------------------- the probe's answer

_report_lock = threading.Lock()
_report_done = threading.Condition(_report_lock)
_report_state: dict = {"answer": None, "at": 0.0, "checking_since": None, "thread": None}


def cached_report(check) -> tuple[int, bytes]:
    """``/healthz``'s answer, ``(status, JSON body)``: ``check()`` at most once per
    ``HEALTHZ_REPORT_SECONDS`` in this process.

    A load balancer probes every web process many times a second under load, and each check
    costs a database connection, a broker connection and queries; answered from this report the
    probe costs a lock and a dictionary. Once the report has expired, the next request gets it
    still, at once, while one background thread checks again; the process's first request
    checks itself (others wait for its answer), as does every request with
    ``HEALTHZ_REPORT_SECONDS=0``. Should a check hang (a database that accepts connections and
    then never answers), the report stops being served once that check has run for
    ``HEALTHZ_STALE_SECONDS`` and the probe answers 503 saying how long it has been running.
    """
    ttl = float(settings.HEALTHZ_REPORT_SECONDS)
    now = time.monotonic()
    with _report_lock:
        answer, at, since = (_report_state[k] for k in ("answer", "at", "checking_since"))
        if answer is not None and now - at < ttl:
            return answer
        if since is not None:
            stale_after = float(settings.HEALTHZ_STALE_SECONDS)
            if answer is None:  # the process's first check: wait for it, up to the limit
                _report_done.wait_for(
                    lambda: _report_state["answer"] is not None,
                    timeout=max(0.0, since + stale_after - now),
                )
                answer, at = _report_state["answer"], _report_state["at"]
                now = time.monotonic()
            # Stale is a check that has run too long, not an old report: after an idle spell
            # the last report is old by then, and the probes arriving while its successor
            # runs get it until that check has run HEALTHZ_STALE_SECONDS.
            if answer is not None and now - since < stale_after:
                return answer
            return _unfinished(now - since)
        _report_state["checking_since"] = now
        if answer is not None and ttl > 0:
            thread = threading.Thread(
                target=_check_in_background, args=(check,), name="healthz-report", daemon=True
            )
            _report_state["thread"] = thread
            thread.start()
            return answer
    return _check(check)


def _check(check) -> tuple[int, bytes]:
    try:
        try:
            status, body = check()
        except Exception as exc:  # the probe reports, never raises
            status = 503
            body = {
                "status": "unhealthy",
                "checks": {"report": f"the checks failed: {exc.__class__.__name__}"},
            }
        answer = (status, json.dumps(body).encode())
        with _report_lock:
            _report_state.update(answer=answer, at=time.monotonic())
        return answer
    finally:
        with _report_lock:
            _report_state["checking_since"] = None
            _report_done.notify_all()


def _check_in_background(check) -> None:
    from django.db import connections

    try:
        _check(check)
    finally:
        connections.close_all()  # this thread's own connection, opened by the check
        with _report_lock:
            _report_state["thread"] = None


def _unfinished(seconds: float) -> tuple[int, bytes]:
    body = {
        "status": "unhealthy",
        "checks": {"report": f"the checks have not finished for {seconds:.1f} s"},
    }
    return 503, json.dumps(body).encode()
