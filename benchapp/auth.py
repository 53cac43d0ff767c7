"""Login throttling: django-axes locks a (username, address) pair after LOGIN_FAILURE_LIMIT
failures; ``ProgressiveDelayBackend`` slows guessing spread over addresses or usernames without
locking anyone out; how a locked-out or delayed client is answered; which address a request
comes from.

Why both: a lock per username alone let anyone lock an admin out from everywhere, and a lock
per address alone let one flood (an anonymous token endpoint fuzzed from 127.0.0.1) lock every
login from that address. Per pair, a guesser locks only itself. What is left, a guesser that
changes address (or a flood of usernames from one address), meets delays that double with each
failure past the limit (at most LOGIN_MAX_DELAY_SECONDS) and cost no password hash, while a
user logging in from an address they logged in from before is never delayed."""

from __future__ import annotations

import math

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import JsonResponse
from django.shortcuts import render


def _minutes() -> int:
    return max(1, round(settings.AXES_COOLOFF_TIME.total_seconds() / 60))


def lockout_message() -> str:
    return (
        f"Too many failed login attempts. Logging in is blocked for {_minutes()} minutes; "
        "wait, or ask an administrator to unlock the account (python manage.py axes_reset)."
    )


def delay_message(seconds: int) -> str:
    return (
        "Too many failed login attempts for this account or from this address: try again in "
        f"{seconds} s (logging in from an address you used before is not delayed)."
    )


def lockout_response(request, original_response=None, credentials=None):
    """429 with a message: JSON for the API (its errors are JSON), a page everywhere else."""
    delay = getattr(request, "login_delay", 0)
    message = delay_message(delay) if delay else lockout_message()
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": message}, status=429)
    else:
        response = render(request, "benchapp/locked_out.html", {"message": message}, status=429)
    if delay:
        response["Retry-After"] = str(delay)
    return response


def _wait(attempts) -> float:
    """Seconds still to wait given axes' failure records ``attempts`` (one username's over every
    address, or one address's over every username): none below the failure limit, then
    1, 2, 4 … seconds after the latest failure, at most LOGIN_MAX_DELAY_SECONDS."""
    from django.db.models import Max, Sum
    from django.utils import timezone

    totals = attempts.aggregate(failures=Sum("failures_since_start"), last=Max("attempt_time"))
    over = (totals["failures"] or 0) - settings.AXES_FAILURE_LIMIT
    if over < 0 or totals["last"] is None:
        return 0.0
    delay = min(2.0**over, settings.LOGIN_MAX_DELAY_SECONDS)
    return delay - (timezone.now() - totals["last"]).total_seconds()


class ProgressiveDelayBackend:
    """Refuses, without checking the password, a login for a username or from an address with
    too many recent failures until its delay has passed; never one from an address this user
    logged in from before. Runs after axes' backend (which refuses locked pairs) and before
    the one that checks passwords."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        from axes.models import AccessAttempt, AccessLog

        if request is None or not username:
            return None
        address = client_ip(request)
        if AccessLog.objects.filter(username=username, ip_address=address).exists():
            return None
        wait = max(
            _wait(AccessAttempt.objects.filter(username=username)),
            _wait(AccessAttempt.objects.filter(ip_address=address)),
        )
        if wait <= 0:
            return None
        request.login_delay = max(1, math.ceil(wait))
        request.axes_locked_out = True  # axes' middleware answers with lockout_response
        raise PermissionDenied(delay_message(request.login_delay))

    # No get_user: this backend never logs anyone in, so no session names it (the test
    # client's force_login takes the first backend that has one).


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
