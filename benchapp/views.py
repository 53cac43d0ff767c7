from __future__ import annotations

from django.db import connection
from django.http import JsonResponse
from django.shortcuts import render

from .health import broker_reachable
from .roles import ADMIN, CURATOR, user_roles


def home(request):
    from evolution.selectors import featured_campaigns

    roles = user_roles(request.user)
    context = {}
    if roles & {ADMIN, CURATOR}:
        context.update(featured_campaigns())
    return render(request, "benchapp/home.html", context)


def healthz(request):
    """200 when the database and the broker answer; 503 naming what failed."""
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
    return JsonResponse(
        {"status": "ok" if healthy else "unhealthy", "checks": checks},
        status=200 if healthy else 503,
    )
