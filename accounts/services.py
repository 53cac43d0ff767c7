from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from .roles import ADMIN, ROLES


@transaction.atomic
def user_create(*, username: str, password: str, role: str, email: str = ""):
    """Create (or update the password and role of) a user with one BenchForge role."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    User = get_user_model()
    user, _ = User.objects.get_or_create(username=username, defaults={"email": email})
    user.set_password(password)
    user.is_staff = role == ADMIN
    user.is_superuser = role == ADMIN
    user.save()
    group, _ = Group.objects.get_or_create(name=role)
    user.groups.set([group])
    return user


class RoleChangeRefused(Exception):
    """A change that would lock the acting admin out (their own admin role, their own account)."""


@transaction.atomic
def user_set_roles(*, user, roles, acting_user=None):
    """Give ``user`` exactly ``roles`` (any of admin / curator / reviewer). The admin role
    also makes the user staff and superuser, as ``user_create`` does; dropping it undoes both.
    An admin cannot take the admin role from themself."""
    roles = set(roles)
    unknown = roles - set(ROLES)
    if unknown:
        raise ValueError(f"unknown roles {sorted(unknown)}; choose from {', '.join(ROLES)}")
    if acting_user is not None and acting_user.pk == user.pk and ADMIN not in roles:
        raise RoleChangeRefused("you cannot take the admin role from yourself")
    groups = [Group.objects.get_or_create(name=role)[0] for role in ROLES if role in roles]
    user.groups.set(groups)
    user.is_staff = user.is_superuser = ADMIN in roles
    user.save(update_fields=["is_staff", "is_superuser"])
    user.__dict__.pop("_benchforge_roles", None)
    return user


@transaction.atomic
def user_set_active(*, user, active: bool, acting_user=None):
    """Deactivate (or reactivate) an account: an inactive user cannot log in, their sessions
    stop being accepted and their API tokens are refused. Nobody deactivates themself."""
    if acting_user is not None and acting_user.pk == user.pk and not active:
        raise RoleChangeRefused("you cannot deactivate your own account")
    user.is_active = active
    user.save(update_fields=["is_active"])
    return user


def user_add(*, username: str, password: str, roles, email: str = ""):
    """Create a user with any set of roles (the admin pages); ``user_create`` is the
    one-role form the command line uses."""
    User = get_user_model()
    with transaction.atomic():
        user = User.objects.create_user(username=username, password=password, email=email)
        user_set_roles(user=user, roles=roles)
    return user
