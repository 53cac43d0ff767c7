"""FrontierSmith campaigns over HTTP (django-ninja): create (optionally launch) and read one.

Launch, pause, resume and cancel are the shared ``/campaigns/{id}/<action>`` operations of
evolution's router: they work on every campaign kind."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from ninja import Router, Schema, Status
from ninja.errors import HttpError

from benchapp.roles import ADMIN, CURATOR, has_role
from evolution.models import ModelEndpoint, ProblemSet
from evolution.services import campaigns as campaign_services

from . import selectors, services
from .models import FrontierCampaign

router = Router(tags=["frontiersmith"])


def _require(request, *roles: str) -> None:
    if not any(has_role(request.user, r) for r in roles):
        raise HttpError(403, "your role does not allow this operation")


class FrontierCampaignIn(Schema):
    name: str
    seed_set: str
    mutator_endpoint_id: int
    solver_endpoint_id: int
    calibration_closed: str | None = None
    calibration_open: str | None = None
    settings: dict = {}
    seed_limit: int | None = None
    budget_max_calls: int | None = None
    budget_max_tokens: int | None = None
    budget_max_cost: Decimal | None = None
    launch: bool = False


class FrontierCampaignOut(Schema):
    id: int
    name: str
    kind: str
    state: str
    state_reason: str
    seed_set: str
    seed_pool: str
    seed_pool_size: int
    output_set: str
    mutator_endpoint: str
    solver_endpoint: str
    calibration_closed: str | None
    calibration_open: str | None
    current_round: int
    coarse_filter: dict
    settings: dict
    replayed: bool
    budget_max_calls: int | None
    budget_max_tokens: int | None
    budget_max_cost: Decimal | None
    created_at: datetime
    url: str


class ErrorOut(Schema):
    detail: str
    errors: dict = {}


def _campaign_out(fc: FrontierCampaign) -> dict:
    c = fc.campaign
    return {
        "id": c.pk,
        "name": c.name,
        "kind": c.kind,
        "state": c.state,
        "state_reason": c.state_reason,
        "seed_set": c.seed_set.name if c.seed_set else "",
        "seed_pool": fc.seed_pool.name,
        "seed_pool_size": fc.seed_pool.problems.count(),
        "output_set": fc.output_set.name,
        "mutator_endpoint": fc.mutator_endpoint.name,
        "solver_endpoint": fc.solver_endpoint.name,
        "calibration_closed": fc.calibration_closed.name if fc.calibration_closed else None,
        "calibration_open": fc.calibration_open.name if fc.calibration_open else None,
        "current_round": fc.current_round,
        "coarse_filter": _coarse_filter(fc),
        "settings": c.settings,
        "replayed": c.replayed,
        "budget_max_calls": c.budget_max_calls,
        "budget_max_tokens": c.budget_max_tokens,
        "budget_max_cost": c.budget_max_cost,
        "created_at": c.created_at,
        "url": reverse("frontiersmith:campaign_detail", args=[c.pk]),
    }


def _coarse_filter(fc: FrontierCampaign) -> dict:
    """The coarse filter's error rates on the labelled sets (the campaign page's table)."""
    rates = selectors.filter_rates(fc=fc)
    return {k: v for k, v in rates.items() if k != "probes"}


def _resolve(payload: FrontierCampaignIn) -> tuple[dict, dict[str, list[str]]]:
    """The referenced rows by field name, and an error per reference that does not exist."""
    found: dict = {}
    errors: dict[str, list[str]] = {}
    for field in ("seed_set", "calibration_closed", "calibration_open"):
        name = getattr(payload, field)
        if name is None:
            found[field] = None
            continue
        found[field] = ProblemSet.objects.filter(name=name).first()
        if found[field] is None:
            errors[field] = [f"problem set {name!r} does not exist"]
    for field in ("mutator_endpoint_id", "solver_endpoint_id"):
        pk = getattr(payload, field)
        found[field] = ModelEndpoint.objects.filter(pk=pk).first()
        if found[field] is None:
            errors[field] = [f"endpoint {pk} does not exist"]
    return found, errors


@router.post("/frontiersmith/campaigns", response={201: FrontierCampaignOut, 400: ErrorOut})
def create_campaign(request, payload: FrontierCampaignIn):
    """Admins only. Unknown seed set, calibration set or endpoint → 400 naming the field; a bad
    setting → 400 whose ``errors`` are keyed by the setting's name. Nothing is created on any
    400."""
    _require(request, ADMIN)
    found, missing = _resolve(payload)
    if missing:
        return Status(400, {"detail": "unknown references", "errors": missing})
    try:
        # Create and launch together: a launch that fails leaves no draft behind.
        with transaction.atomic():
            campaign = services.frontier_campaign_create(
                name=payload.name,
                seed_set=found["seed_set"],
                mutator_endpoint=found["mutator_endpoint_id"],
                solver_endpoint=found["solver_endpoint_id"],
                settings=payload.settings,
                seed_limit=payload.seed_limit,
                calibration_closed=found["calibration_closed"],
                calibration_open=found["calibration_open"],
                budget_max_calls=payload.budget_max_calls,
                budget_max_tokens=payload.budget_max_tokens,
                budget_max_cost=payload.budget_max_cost,
                created_by=request.user,
            )
            if payload.launch:
                campaign_services.campaign_launch(campaign_id=campaign.pk)
    except ValidationError as exc:
        return Status(400, {"detail": "invalid campaign", "errors": exc.message_dict})
    return Status(201, _campaign_out(selectors.frontier_get(campaign_id=campaign.pk)))


@router.get("/frontiersmith/campaigns/{campaign_id}", response=FrontierCampaignOut)
def get_campaign(request, campaign_id: int):
    _require(request, ADMIN, CURATOR)
    try:
        return _campaign_out(selectors.frontier_get(campaign_id=campaign_id))
    except FrontierCampaign.DoesNotExist:
        raise HttpError(404, "no FrontierSmith campaign with this id") from None
