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
