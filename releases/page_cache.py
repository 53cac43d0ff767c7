"""Public release pages (release, card, leaderboard, item) cached per content.

A published release's items and tests never change (the content hash says so, the database
enforces it), so their rendering can be reused; what can still change on those pages (errata
and their fixes, completed leaderboard runs and re-measurements, newer published versions) is
folded into the key by one cheap query each, and so is which of the release's items reviewers
are rating blind right now (their facts are withheld meanwhile, ``releases.blinding``). Only
anonymous visitors get cached pages: a signed-in user's page carries their name, role links and
CSRF token (and a user rating blind gets no public page at all). Settings: PUBLIC_PAGE_CACHE_SECONDS
(0 turns caching off) and CACHES.
"""

from __future__ import annotations

import functools
import hashlib

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Max, OuterRef, Q, Subquery
from django.http import HttpResponse

from . import blinding
from .models import (
    Erratum,
    LeaderboardRun,
    QuestionRun,
    Release,
    ReleaseState,
    Remeasurement,
    RunState,
)


def _done(model, name: str, where: dict) -> dict:
    """``<name>_n`` and ``<name>_last``: how many rows of ``model`` match ``where`` and the
    newest ``finished_at``, as subqueries of a Release query."""
    rows = model.objects.filter(**where).order_by().values("release")
    return {
        f"{name}_n": Subquery(rows.annotate(c=Count("id")).values("c")[:1]),
        f"{name}_last": Subquery(rows.annotate(m=Max("finished_at")).values("m")[:1]),
    }


def page_version(release: Release) -> str:
    """Everything a public page shows that may change after publication, as a short text."""
    errata = Erratum.objects.filter(release=release).aggregate(
        n=Count("id"), fixed=Count("fixed_in"), last=Max("id")
    )
    runs = LeaderboardRun.objects.filter(release=release).aggregate(
        n=Count("id", filter=Q(state=RunState.COMPLETED)), last=Max("finished_at")
    )
    # Newer published versions; re-measurements by the living panel (difficulty history,
    # saturation flags raised and withdrawn; one may reuse every run, so the runs above do not
    # show it) and the question leaderboard's runs: one query for the three.
    completed = {"release": OuterRef("pk"), "state": RunState.COMPLETED}
    published = (
        Release.objects.filter(benchmark_id=OuterRef("benchmark_id"), state=ReleaseState.PUBLISHED)
        .order_by()
        .values("benchmark_id")
    )
    later = (
        Release.objects.filter(pk=release.pk)
        .annotate(
            versions=Subquery(published.annotate(c=Count("id")).values("c")[:1]),
            **_done(Remeasurement, "remeasured", completed),
            **_done(QuestionRun, "questions", completed),
        )
        .values("versions", "remeasured_n", "remeasured_last", "questions_n", "questions_last")
        .get()
    )
    remeasured = (later["remeasured_n"], later["remeasured_last"])
    questions = (later["questions_n"], later["questions_last"])
    # Which of its items reviewers are rating blind now: their facts are withheld while they
    # are, so a page cached before a round opened (or was submitted) must not be served after.
    blind = blinding.cache_key_part(release)
    return f"{errata}|{runs}|{later['versions']}|{remeasured}|{questions}|{blind}"


def _controls_key(request, controls: tuple[str, ...]) -> str:
    """The page's controls as they affect it: only the named query parameters, in a fixed
    order, so ``?b=1&a=2`` and ``?a=2&b=1`` share an entry and unknown parameters add none."""
    return "&".join(f"{name}={request.GET.get(name, '')[:200]}" for name in controls)


def cached_public_page(view=None, *, controls: tuple[str, ...] = ()):
    """Wrap a public view taking ``(request, slug, version, ...)`` whose release the view looks
    up itself; the key is the release's identity, content hash, page version, the path and
    the values of the query parameters named in ``controls`` (the only ones the view reads).
    Use as ``@cached_public_page`` or ``@cached_public_page(controls=("sort", ...))``."""
    if view is None:
        return functools.partial(cached_public_page, controls=controls)
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
                request.path,
                _controls_key(request, controls),
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
