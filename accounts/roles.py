"""Roles are Django groups; permission checks go through these helpers only.

admin    - everything (also any superuser)
curator  - lineages, review rounds, gate, releases, leaderboard runs
reviewer - only their own blinded review queue
anonymous visitors see published releases and leaderboards.
"""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied

ADMIN = "admin"
CURATOR = "curator"
REVIEWER = "reviewer"
ROLES = (ADMIN, CURATOR, REVIEWER)

# Which roles a role implies: an admin may do whatever a curator may.
_IMPLIED = {ADMIN: {ADMIN, CURATOR}, CURATOR: {CURATOR}, REVIEWER: {REVIEWER}}


def user_roles(user) -> set[str]:
    if not getattr(user, "is_authenticated", False):
        return set()
    cached = getattr(user, "_benchforge_roles", None)
    if cached is not None:
        return cached
    roles: set[str] = set()
    if user.is_superuser:
        roles |= {ADMIN, CURATOR}
    for name in user.groups.values_list("name", flat=True):
        roles |= _IMPLIED.get(name, set())
    user._benchforge_roles = roles
    return roles


def has_role(user, role: str) -> bool:
    return role in user_roles(user)


def role_required(*roles: str):
    """View decorator: anonymous users go to the login page, others without a role get 403."""

    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not user_roles(request.user) & set(roles):
                raise PermissionDenied("Your role does not allow this page.")
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


def roles_context(request):
    roles = user_roles(request.user)
    return {
        "is_admin_role": ADMIN in roles,
        "is_curator_role": CURATOR in roles,
        "is_reviewer_role": REVIEWER in roles,
    }


def request_user(request):
    """The user of a valid bearer token, else the session's user; None for anyone else. The
    token is looked up only when one is sent (an anonymous probe costs no query)."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if header[:7].lower() == "bearer ":
        from .models import APIToken

        token = APIToken.find(header[7:].strip())
        if token is not None and token.user.is_active:
            return token.user
    user = getattr(request, "user", None)
    return user if user is not None and user.is_authenticated else None
