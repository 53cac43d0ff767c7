from __future__ import annotations

from django.db import connection
from django.http import HttpResponse
from django.shortcuts import render

from accounts.roles import ADMIN, CURATOR, user_roles

from .access import request_user, sees_operations
from .health import broker_reachable, cached_report, workers_per_queue


def home(request):
    from evolution.selectors import featured_campaigns

    roles = user_roles(request.user)
    context = {}
    if roles & {ADMIN, CURATOR}:
        context.update(featured_campaigns())
    return render(request, "benchapp/home.html", context)


# What anyone else learns from the probe: the status, which its HTTP code says too.
_STATUS_ONLY = {200: b'{"status": "ok"}'}
_UNHEALTHY = b'{"status": "unhealthy"}'


def healthz(request):
    """The probe: answered from the report ``health.cached_report`` keeps (``_healthz_checks``
    at most once per ``HEALTHZ_REPORT_SECONDS`` per process), so a busy probe costs almost
    nothing. Admins (signed in, or with an admin's API token) get the whole report; anyone
    else the status and the HTTP code only, never the checks, queues or worker host names."""
    status, content = cached_report(_healthz_checks)
    if not sees_operations(request_user(request)):
        content = _STATUS_ONLY.get(status, _UNHEALTHY)
    return HttpResponse(content, status=status, content_type="application/json")


def _healthz_checks() -> tuple[int, dict]:
    """200 when the database and the broker answer; 503 naming what failed. ``workers``
    reports how many workers consume each queue (cached, see ``health.workers_per_queue``); a
    queue no worker consumes is named in ``warnings`` but does not fail the probe, which the web
    container's own health check uses."""
    checks = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:  # report, never raise: this is the probe
        checks["database"] = f"unreachable: {exc.__class__.__name__}"
    ok, detail = broker_reachable()
    checks["broker"] = "ok" if ok else f"unreachable: {detail}"
    healthy = all(v == "ok" for v in checks.values())
    body = {"status": "ok" if healthy else "unhealthy", "checks": checks}
    if ok:
        workers = workers_per_queue()
        body["workers"] = workers
        idle = [q for q, n in workers["queues"].items() if not n]
        if workers["error"]:
            body["warnings"] = [f"workers did not answer: {workers['error']}"]
        elif idle:
            body["warnings"] = [f"no worker consumes queue {q!r}" for q in idle]
        # Reported, not a failure of this process: the web answers; the work waits.
        # Asked only of a database that answered (a refused one is the 503 already).
        waiting = (
            _campaigns_without_worker(workers["workers"])
            if healthy and not workers["error"]
            else []
        )
        if waiting:
            body["campaigns_without_worker"] = waiting
    return (200 if healthy else 503), body


def _campaigns_without_worker(by_queue: dict[str, list[str]]) -> list[dict]:
    """Launched campaigns whose queues no live worker serves, from the cached report."""
    from evolution.models import Campaign
    from evolution.streams.kinds import campaigns_without_worker

    if not Campaign.objects.filter(state__in=["queued", "running"]).exists():
        return []
    return campaigns_without_worker(by_queue)
