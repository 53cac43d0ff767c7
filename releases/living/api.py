"""Living-benchmark API: the panel, re-measurements and saturation of a benchmark (public),
adding a model to the panel or taking one off it and a release's calibration figures (curators)."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404
from ninja import Router, Schema, Status
from ninja.errors import HttpError

from accounts.roles import ADMIN, CURATOR, user_roles
from evolution.models import ModelEndpoint

from .. import blinding, calibration, living
from ..models import Benchmark, Release

router = Router(tags=["living benchmarks"])


class SeatOut(Schema):
    model: str
    samples: int
    added_at: datetime


class RemeasurementOut(Schema):
    id: int
    version: str
    trigger: str
    reason: str
    state: str
    created_at: datetime
    finished_at: datetime | None
    saturated: int | None
    problems: int | None
    # Saturation is over the pass/fail problems; open-ended (scored) ones are never flagged.
    # None for a re-measurement recorded before they were counted apart.
    pass_fail_problems: int | None = None
    scored_problems: int | None = None


class FlagOut(Schema):
    public_id: str
    flagged_at: datetime
    pass_at_1: float
    bound: float
    saturating_models: list[str]


class WithdrawnFlagOut(FlagOut):
    withdrawn_at: datetime
    withdrawn_pass_at_1: float
    withdrawn_reason: str


class LivingOut(Schema):
    benchmark: str
    latest_version: str | None
    panel: list[SeatOut]
    remeasurements: list[RemeasurementOut]
    saturated: list[FlagOut]
    withdrawn: list[WithdrawnFlagOut]


class SeatIn(Schema):
    endpoint_id: int
    samples: int = 4


class DisagreementOut(Schema):
    public_id: str
    expert_difficulty: float
    cf_rating: float | None
    pass_at_1: float
    gap: float
    model_only: bool
    reason: str


class CalibrationOut(Schema):
    rho: float | None
    low: float | None
    high: float | None
    n: int
    unrated: int
    # Open-ended (scored) problems: no pass@1, left out of the comparison.
    scored: int = 0
    disagreements: list[DisagreementOut]


def _require_curator(request) -> None:
    if not user_roles(request.user) & {ADMIN, CURATOR}:
        raise HttpError(403, "Your role does not allow this operation.")


def _living(benchmark: Benchmark, *, curator: bool = False) -> LivingOut:
    data = living.benchmark_living(benchmark=benchmark)
    if not curator:
        # A saturation flag is a measured difficulty: none of problems under blind review.
        data = blinding.withhold_living(data)
    return LivingOut(
        benchmark=benchmark.name,
        latest_version=data["latest"].version if data["latest"] else None,
        panel=[
            SeatOut(model=s.endpoint.name, samples=s.samples, added_at=s.added_at)
            for s in data["seats"]
        ],
        remeasurements=[
            RemeasurementOut(
                id=r.pk,
                version=r.release.version,
                trigger=r.trigger,
                reason=r.reason,
                state=r.state,
                created_at=r.created_at,
                finished_at=r.finished_at,
                saturated=r.summary.get("saturated"),
                problems=r.summary.get("problems"),
                pass_fail_problems=r.summary.get("pass_fail_problems"),
                scored_problems=r.summary.get("scored_problems"),
            )
            for r in data["remeasurements"]
        ],
        saturated=[
            FlagOut(
                public_id=f.public_id,
                flagged_at=f.flagged_at,
                pass_at_1=f.pass_at_1,
                bound=f.bound,
                saturating_models=f.saturating_models,
            )
            for f in data["flags"]
        ],
        withdrawn=[
            WithdrawnFlagOut(
                public_id=f.public_id,
                flagged_at=f.flagged_at,
                pass_at_1=f.pass_at_1,
                bound=f.bound,
                saturating_models=f.saturating_models,
                withdrawn_at=f.withdrawn_at,
                withdrawn_pass_at_1=f.withdrawn_pass_at_1,
                withdrawn_reason=f.withdrawn_reason,
            )
            for f in data["withdrawn_flags"]
        ],
    )


@router.get("/benchmarks/{slug}/living", response=LivingOut, auth=None)
def benchmark_living(request, slug: str):
    """Saturation flags of problems under blind review are left out (curators get them);
    a user rating problems blind right now gets 403."""
    blinding.refuse_api_while_rating_blind(request)
    curator = bool(user_roles(request.user) & {ADMIN, CURATOR})
    return _living(get_object_or_404(Benchmark, slug=slug), curator=curator)


@router.post("/benchmarks/{slug}/panel", response={201: RemeasurementOut})
def panel_add(request, slug: str, payload: SeatIn):
    _require_curator(request)
    benchmark = get_object_or_404(Benchmark, slug=slug)
    endpoint = ModelEndpoint.objects.filter(pk=payload.endpoint_id).first()
    if endpoint is None:
        raise HttpError(400, f"endpoint_id: no endpoint {payload.endpoint_id}")
    try:
        with transaction.atomic():
            r = living.panel_seat_add(
                benchmark=benchmark, endpoint=endpoint, samples=payload.samples, by=request.user
            )
    except ValidationError as exc:
        detail = "; ".join(
            f"{'endpoint_id' if k == 'endpoint' else k}: {' '.join(v)}"
            for k, v in exc.message_dict.items()
        )
        raise HttpError(400, detail)
    return Status(201, _queued_out(r))


def _queued_out(r) -> RemeasurementOut:
    return RemeasurementOut(
        id=r.pk,
        version=r.release.version,
        trigger=r.trigger,
        reason=r.reason,
        state=r.state,
        created_at=r.created_at,
        finished_at=r.finished_at,
        saturated=None,
        problems=None,
    )


class SeatRemovedOut(Schema):
    removed: str
    remeasurement: RemeasurementOut | None


@router.delete("/benchmarks/{slug}/panel/{endpoint_id}", response=SeatRemovedOut)
def panel_remove(request, slug: str, endpoint_id: int):
    """Take a model off the benchmark's panel; the latest published release is re-measured by
    the panel that remains (``remeasurement`` is null when no panel or release remains)."""
    _require_curator(request)
    benchmark = get_object_or_404(Benchmark, slug=slug)
    endpoint = get_object_or_404(ModelEndpoint, pk=endpoint_id)
    try:
        with transaction.atomic():
            r = living.panel_seat_remove(benchmark=benchmark, endpoint=endpoint, by=request.user)
    except ValidationError as exc:
        raise HttpError(404, " ".join(exc.message_dict.get("endpoint", exc.messages)))
    return SeatRemovedOut(removed=endpoint.name, remeasurement=_queued_out(r) if r else None)


@router.get("/releases/{release_id}/calibration", response=CalibrationOut)
def release_calibration(request, release_id: int):
    _require_curator(request)
    cal = calibration.for_release(release=get_object_or_404(Release, pk=release_id))
    return CalibrationOut(
        **cal.correlation.to_dict(),
        unrated=cal.unrated,
        scored=cal.scored,
        disagreements=[
            DisagreementOut(**{k: getattr(r, k) for k in DisagreementOut.model_fields})
            for r in cal.disagreements
        ],
    )
