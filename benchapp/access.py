"""Who may read how the installation is built and run: ``/healthz``'s checks, worker host
names and queues (admins), and the API's OpenAPI schema and docs page (admins and curators).
Anyone else gets ``/healthz``'s status only and no schema. A script proves who it is with the
user's API token (``Authorization: Bearer bf_…``), a browser with its session."""

from __future__ import annotations

import functools

from django.contrib.auth.views import redirect_to_login
from django.http import JsonResponse

from accounts.roles import ADMIN, CURATOR, request_user, user_roles

__all__ = ["request_user", "reads_schema", "schema_for_staff", "sees_operations"]

SCHEMA_ROLES = {ADMIN, CURATOR}


def sees_operations(user) -> bool:
    """Worker host names, queues and checks: what the admin pages' workers page shows."""
    return user is not None and (user.is_staff or ADMIN in user_roles(user))


def reads_schema(user) -> bool:
    return user is not None and (user.is_staff or bool(user_roles(user) & SCHEMA_ROLES))


def schema_for_staff(view):
    """The API's ``docs_decorator``: the schema (401 without a user, 403 for another role) and
    the docs page (the login page without a user)."""

    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        user = request_user(request)
        if reads_schema(user):
            return view(request, *args, **kwargs)
        wants_json = request.path.endswith(".json")
        if user is None and not wants_json:
            return redirect_to_login(request.get_full_path())
        detail = (
            "sign in as an admin or curator, or send their API token"
            if user is None
            else "the API schema is for admins and curators"
        )
        return JsonResponse({"detail": detail}, status=401 if user is None else 403)

    return wrapper
