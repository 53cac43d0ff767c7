"""Release API. Listing published releases and their leaderboards needs no login; the gate,
freezing, publishing, evaluations and full exports need the curator role."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from ninja import Router, Schema
from ninja.errors import HttpError

from benchapp.roles import ADMIN, CURATOR, user_roles
from evolution.models import ModelEndpoint

from . import exporters, leaderboard, selectors, services
from .models import Release, ReleaseState
from .tasks import enqueue_leaderboard_run

router = Router(tags=["releases"])


def _require_curator(request) -> None:
    if not user_roles(request.user) & {ADMIN, CURATOR}:
        raise HttpError(403, "Your role does not allow this operation.")


def _bad(exc: ValidationError):
    raise HttpError(400, "; ".join(exc.messages))


class ReleaseOut(Schema):
    id: int
    benchmark: str
    slug: str
    version: str
    state: str
    content_hash: str
    item_count: int
    test_count: int
    published_at: datetime | None


class EstimateOut(Schema):
    value: float
    low: float
    high: float
    n: int


class LeaderboardRowOut(Schema):
    model: str
    source: str
    samples: int
    pass1: EstimateOut | None
    k: str
    passk: EstimateOut | None
    clean: EstimateOut | None
    flagged: int


class GateOut(Schema):
    id: int
    candidates: int
    passed: int


class RunIn(Schema):
    endpoint_id: int
    samples: int = 4


class RunOut(Schema):
    id: int
    label: str
    state: str


def _release_out(r: Release) -> ReleaseOut:
    return ReleaseOut(
        id=r.pk,
        benchmark=r.benchmark.name,
        slug=r.benchmark.slug,
        version=r.version,
        state=r.state,
        content_hash=r.content_hash,
        item_count=r.item_count,
        test_count=r.test_count,
        published_at=r.published_at,
    )


@router.get("/releases", response=list[ReleaseOut], auth=None)
def list_releases(request):
    """Published releases for everyone; curators also see drafts and frozen ones."""
    if user_roles(request.user) & {ADMIN, CURATOR}:
        rows = selectors.release_list()
    else:
        rows = selectors.public_release_list()
    return [_release_out(r) for r in rows]


def _published(release_id: int) -> Release:
    return get_object_or_404(
        Release.objects.select_related("benchmark"), pk=release_id, state=ReleaseState.PUBLISHED
    )


@router.get("/releases/{release_id}/leaderboard", response=list[LeaderboardRowOut], auth=None)
def release_leaderboard(request, release_id: int, sort: str = "pass1"):
    release = _published(release_id)
    return [
        LeaderboardRowOut(**{k: row[k] for k in LeaderboardRowOut.model_fields})
        for row in selectors.public_leaderboard(release=release, sort=sort)
    ]


def _release(release_id: int) -> Release:
    return get_object_or_404(Release.objects.select_related("benchmark"), pk=release_id)


@router.post("/releases/{release_id}/gate", response=GateOut)
def run_gate(request, release_id: int):
    _require_curator(request)
    try:
        run = services.gate_run_create(release=_release(release_id), by=request.user)
    except ValidationError as exc:
        _bad(exc)
    return GateOut(id=run.pk, candidates=run.candidates, passed=run.passed)


@router.post("/releases/{release_id}/freeze", response=ReleaseOut)
def freeze(request, release_id: int):
    _require_curator(request)
    try:
        release = services.release_freeze(release=_release(release_id), by=request.user)
    except ValidationError as exc:
        _bad(exc)
    return _release_out(release)


@router.post("/releases/{release_id}/publish", response=ReleaseOut)
def publish(request, release_id: int):
    _require_curator(request)
    try:
        release = services.release_publish(release=_release(release_id))
    except ValidationError as exc:
        _bad(exc)
    return _release_out(release)


@router.post("/releases/{release_id}/runs", response=RunOut)
def create_run(request, release_id: int, payload: RunIn):
    _require_curator(request)
    endpoint = get_object_or_404(ModelEndpoint, pk=payload.endpoint_id)
    try:
        run = leaderboard.run_create(
            release=_release(release_id),
            endpoint=endpoint,
            samples=payload.samples,
            by=request.user,
        )
    except ValidationError as exc:
        _bad(exc)
    enqueue_leaderboard_run(run.pk)
    return RunOut(id=run.pk, label=run.label, state=run.state)


@router.get("/releases/{release_id}/export/{fmt}")
def export(request, release_id: int, fmt: str):
    """The full export (hidden tests included) in lcb, jsonl, hf or rl."""
    _require_curator(request)
    release = _release(release_id)
    if release.state == ReleaseState.DRAFT:
        raise HttpError(409, "A draft has no exports; freeze it first.")
    if fmt not in exporters.FORMATS:
        raise HttpError(404, f"Unknown format; choose one of {', '.join(exporters.FORMATS)}.")
    content_type, suffix = exporters.FORMATS[fmt]
    response = HttpResponse(exporters.export_bytes(release, fmt), content_type=content_type)
    name = f"{release.benchmark.slug}-v{release.version}-{suffix}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
