"""The HTTP API: one NinjaAPI mounting each app's Router. OpenAPI at /api/openapi.json and
/api/docs, for admins and curators (``access.schema_for_staff``)."""

from __future__ import annotations

import logging

from django.contrib.auth import authenticate
from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.db import DataError
from django.utils import timezone
from ninja import Field, NinjaAPI, Router, Schema, Status
from ninja.security import HttpBearer, django_auth

from accounts.models import APIToken

from .access import schema_for_staff

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


ERROR_SCHEMA = {
    "type": "object",
    "properties": {"detail": {"description": "what went wrong (a list for 422)"}},
    "required": ["detail"],
}
# What every operation may answer besides its own responses, and when.
_ERRORS = {
    "400": "bad request: a NUL character in the URL, the query string or the body, a body "
    "that cannot be parsed, or one larger than MAX_UPLOAD_BYTES",
    "401": "not authenticated: no session and no valid bearer token",
    "403": "authenticated, but the role does not allow this operation",
    "404": "no such object (or not visible to this user)",
    "422": "the input does not match the schema; detail lists each field and why",
}
_ERROR_REF = {"$ref": "#/components/schemas/ErrorDetail"}


def _takes_generic(schema: dict, code: str, components: dict) -> bool:
    """Whether a declared answer's schema already accepts the generic ``{"detail": …}`` of
    ``code``: a string, or for 422 the framework's list of field errors."""
    if "$ref" in schema:
        schema = components.get(schema["$ref"].rsplit("/", 1)[-1], {})
    if set(schema.get("required", [])) - {"detail"}:
        return False
    detail = schema.get("properties", {}).get("detail", {})
    kinds = detail.get("type")
    if kinds is None:
        return not detail.get("anyOf") and not detail.get("$ref")
    kinds = {kinds} if isinstance(kinds, str) else set(kinds)
    return ("array" if code == "422" else "string") in kinds


def _also_generic(response: dict, code: str, components: dict) -> None:
    """A declared error answer whose own schema does not accept the generic ``{"detail": …}``
    may still come as it (a NUL refused before the view, the framework's 422 list): its schema
    becomes either one."""
    content = response.setdefault("content", {}).setdefault("application/json", {})
    schema = content.get("schema")
    if schema is None:
        content["schema"] = _ERROR_REF
    elif not _takes_generic(schema, code, components):
        content["schema"] = {"anyOf": [schema, _ERROR_REF]}
        response["description"] = f"{response.get('description', '')}; or {_ERRORS[code]}"


def document_errors(schema: dict) -> dict:
    """Add the error answers the framework and the edge give but do not declare: 400 on every
    operation (``RejectNulMiddleware`` and the body parser answer before any view), 401 and
    403 where an operation needs authentication, 404 where the path names an object, 422
    where there is input to validate. A declared error answer (a 400 or 409 with its own
    schema) keeps its schema, widened to also allow ``ErrorDetail`` where the framework may
    answer that code too."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components["ErrorDetail"] = ERROR_SCHEMA
    for path, methods in schema.get("paths", {}).items():
        for operation in methods.values():
            wanted = ["400"]
            if operation.get("security"):
                wanted += ["401", "403"]
            if "{" in path:
                wanted.append("404")
            if operation.get("parameters") or operation.get("requestBody"):
                wanted.append("422")
            responses = operation.setdefault("responses", {})
            declared = {str(code): code for code in responses}
            for code in wanted:
                if code in declared:
                    _also_generic(responses[declared[code]], code, components)
                    continue
                responses[code] = {
                    "description": _ERRORS[code],
                    "content": {"application/json": {"schema": _ERROR_REF}},
                }
    return schema


class BenchForgeAPI(NinjaAPI):
    def get_openapi_schema(self, *args, **kwargs):
        return document_errors(super().get_openapi_schema(*args, **kwargs))


api = BenchForgeAPI(
    title="BenchForge API",
    version="1",
    docs_url="/docs",
    auth=[BearerToken(), django_auth],
    # The schema and its docs page: admins and curators (session or API token), no one else.
    docs_decorator=schema_for_staff,
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

        return Status(429, {"detail": lockout_message()})
    if user is None or not user.is_active:
        return Status(401, {"detail": "username or password is wrong"})
    token, raw = APIToken.issue(user=user, name=payload.name)
    return Status(201, {"token": raw, "prefix": token.prefix, "name": token.name})


@api.exception_handler(DataError)
def _data_error(request, exc):
    # A value the schema let through but the column cannot hold (a number past its range):
    # the client's input, so a 400, never a 500.
    return api.create_response(
        request, {"detail": f"a value does not fit the database: {exc}".strip()}, status=400
    )


@api.exception_handler(PermissionDenied)
def _forbidden(request, exc):
    return api.create_response(
        request, {"detail": str(exc) or "your role does not allow this operation"}, status=403
    )


@api.exception_handler(SuspiciousOperation)
def _suspicious(request, exc):
    # RequestDataTooBig and friends: the client sent something the server refuses to read.
    return api.create_response(request, {"detail": str(exc) or "bad request"}, status=400)


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
    api.add_router("/", "evolution.api.problems.router")
    api.add_router("/", review_router)
    api.add_router("/", "releases.api.router")
    api.add_router("/", "releases.living.api.router")
    api.add_router("/", "reasoning.api.router")
    api.add_router("/", "evosyn.api.router")
    api.add_router("/", "frontiersmith.api.router")
    api.add_router("/", "xcoder.api.router")


_mount()
