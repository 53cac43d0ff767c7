"""The HTTP API: one NinjaAPI mounting each app's Router. OpenAPI at /api/docs."""

from __future__ import annotations

import logging

from django.contrib.auth import authenticate
from django.db import DataError
from django.utils import timezone
from ninja import Field, NinjaAPI, Router, Schema
from ninja.security import HttpBearer, django_auth

from .models import APIToken

logger = logging.getLogger(__name__)


class BearerToken(HttpBearer):
    """Per-user API tokens for scripts: ``Authorization: Bearer bf_…``."""

    def authenticate(self, request, token):
        found = APIToken.find(token)
        if found is None or not found.user.is_active:
            return None
        APIToken.objects.filter(pk=found.pk).update(last_used_at=timezone.now())
        request.user = found.user
        return found.user


api = NinjaAPI(
    title="BenchForge API",
    version="1",
    docs_url="/docs",
    auth=[BearerToken(), django_auth],
)


auth_router = Router(tags=["auth"])


class TokenIn(Schema):
    username: str = Field(..., min_length=1, max_length=150)
    password: str = Field(..., min_length=1, max_length=4096)
    name: str = Field("script", min_length=1, max_length=100)


class TokenOut(Schema):
    token: str
    prefix: str
    name: str


class AuthErrorOut(Schema):
    detail: str


@auth_router.post(
    "/tokens", auth=None, response={201: TokenOut, 401: AuthErrorOut, 429: AuthErrorOut}
)
def token_issue(request, payload: TokenIn):
    """Exchange a username and password for a bearer token (shown once; only its hash is kept).

    Throttled like the login pages: after LOGIN_FAILURE_LIMIT failures for the username or the
    client address, 429 until the cool-off ends, before any password is checked."""
    user = authenticate(request, username=payload.username, password=payload.password)
    if getattr(request, "axes_locked_out", False):
        from .auth import lockout_message

        return 429, {"detail": lockout_message()}
    if user is None or not user.is_active:
        return 401, {"detail": "username or password is wrong"}
    token, raw = APIToken.issue(user=user, name=payload.name)
    return 201, {"token": raw, "prefix": token.prefix, "name": token.name}


@api.exception_handler(DataError)
def _data_error(request, exc):
    # A value the schema let through but the column cannot hold (a number past its range):
    # the client's input, so a 400, never a 500.
    return api.create_response(
        request, {"detail": f"a value does not fit the database: {exc}".strip()}, status=400
    )


@api.exception_handler(Exception)
def _server_error(request, exc):
    # Logged with its traceback like any server error, but answered in JSON like every other
    # API response: scripts parse the body, whatever the status.
    logger.exception("API error on %s %s", request.method, request.path)
    return api.create_response(request, {"detail": "internal server error"}, status=500)


def _mount() -> None:
    from evolution.api import router as evolution_router
    from review.api import router as review_router

    api.add_router("/", auth_router)
    api.add_router("/", evolution_router)
    api.add_router("/", "evolution.problem_api.router")
    api.add_router("/", review_router)
    api.add_router("/", "releases.api.router")
    api.add_router("/", "releases.api_living.router")
    api.add_router("/", "reasoning.api.router")
    api.add_router("/", "evosyn.api.router")
    api.add_router("/", "frontiersmith.api.router")


_mount()
