"""The HTTP API: one NinjaAPI mounting each app's Router. OpenAPI at /api/docs."""

from __future__ import annotations

from django.utils import timezone
from ninja import NinjaAPI
from ninja.security import HttpBearer, django_auth

from .models import APIToken


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


def _mount() -> None:
    from evolution.api import router as evolution_router
    from review.api import router as review_router

    api.add_router("/", evolution_router)
    api.add_router("/", "evolution.problem_api.router")
    api.add_router("/", review_router)
    api.add_router("/", "releases.api.router")
    api.add_router("/", "reasoning.api.router")
    api.add_router("/", "evosyn.api.router")
    api.add_router("/", "frontiersmith.api.router")


_mount()
