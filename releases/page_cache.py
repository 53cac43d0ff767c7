"""Public release pages (release, card, leaderboard, item) cached per content.

A published release's items and tests never change (the content hash says so, the database
enforces it), so their rendering can be reused; what can still change on those pages (errata
and their fixes, completed leaderboard runs, newer published versions) is folded into the
key by one cheap query each. Only anonymous visitors get cached pages: a signed-in user's
page carries their name, role links and CSRF token. Settings: PUBLIC_PAGE_CACHE_SECONDS
(0 turns caching off) and CACHES.
"""

from __future__ import annotations

import functools
import hashlib

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Max, Q
from django.http import HttpResponse

from .models import Erratum, LeaderboardRun, Release, ReleaseState, RunState


def page_version(release: Release) -> str:
    """Everything a public page shows that may change after publication, as a short text."""
    errata = Erratum.objects.filter(release=release).aggregate(
        n=Count("id"), fixed=Count("fixed_in"), last=Max("id")
    )
    runs = LeaderboardRun.objects.filter(release=release).aggregate(
        n=Count("id", filter=Q(state=RunState.COMPLETED)), last=Max("finished_at")
    )
    versions = Release.objects.filter(
        benchmark_id=release.benchmark_id, state=ReleaseState.PUBLISHED
    ).count()
    return f"{errata}|{runs}|{versions}"


def cached_public_page(view):
    """Wrap a public view taking ``(request, slug, version, ...)`` whose release the view looks
    up itself; the key is the release's identity, content hash, page version and full URL."""
    from .selectors import public_release_get

    @functools.wraps(view)
    def wrapper(request, slug: str, version: str, *args, **kwargs):
        seconds = settings.PUBLIC_PAGE_CACHE_SECONDS
        if seconds <= 0 or request.user.is_authenticated or request.method != "GET":
            return view(request, slug, version, *args, **kwargs)
        try:
            release = public_release_get(slug=slug, version=version)
        except Release.DoesNotExist:
            return view(request, slug, version, *args, **kwargs)  # its own 404
        raw = "\n".join(
            [
                view.__name__,
                str(release.pk),
                release.published_at.isoformat(),
                release.content_hash,
                page_version(release),
                request.get_full_path(),
            ]
        )
        key = "public-page:" + hashlib.sha256(raw.encode()).hexdigest()
        hit = cache.get(key)
        if hit is not None:
            content, content_type = hit
            response = HttpResponse(content, content_type=content_type)
            response["X-Page-Cache"] = "hit"
            return response
        response = view(request, slug, version, *args, **kwargs)
        if response.status_code == 200 and not response.streaming:
            cache.set(key, (response.content, response["Content-Type"]), seconds)
            response["X-Page-Cache"] = "miss"
        return response

    return wrapper
