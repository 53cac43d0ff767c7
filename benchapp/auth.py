"""Login throttling hooks for django-axes: how a locked-out client is answered, and which
address a request comes from."""

from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse
from django.shortcuts import render


def _minutes() -> int:
    return max(1, round(settings.AXES_COOLOFF_TIME.total_seconds() / 60))


def lockout_message() -> str:
    return (
        f"Too many failed login attempts. Logging in is blocked for {_minutes()} minutes; "
        "wait, or ask an administrator to unlock the account (python manage.py axes_reset)."
    )


def lockout_response(request, original_response=None, credentials=None):
    """429 with a message: JSON for the API (its errors are JSON), a page everywhere else."""
    message = lockout_message()
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message}, status=429)
    return render(request, "benchapp/locked_out.html", {"message": message}, status=429)


def client_ip(request) -> str:
    """The client's address: the socket's, or the one the trusted proxies recorded.

    With TRUSTED_PROXY_COUNT = n, the n-th address from the right of X-Forwarded-For is the
    one the outermost trusted proxy saw; anything left of it is client-supplied and ignored."""
    remote = request.META.get("REMOTE_ADDR", "")
    hops = settings.TRUSTED_PROXY_COUNT
    if hops <= 0:
        return remote
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [part for part in forwarded if part]
    if len(forwarded) < hops:
        return remote
    return forwarded[-hops]
