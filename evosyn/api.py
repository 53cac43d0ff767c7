"""EvoSyn campaigns over HTTP (django-ninja): create (optionally launch) and read one.

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
from evolution.models import ModelEndpoint, Panel, ProblemSet
from evolution.services import campaigns as campaign_services

from . import selectors, services
from .forms import ROLES
from .models import EvoSynCampaign, InstanceRole

router = Router(tags=["evosyn"])


def _require(request, *roles: str) -> None:
    if not any(has_role(request.user, r) for r in roles):
        raise HttpError(403, "your role does not allow this operation")


class EvoSynCampaignIn(Schema):
    name: str
    seed_set: str
    endpoint_id: int
    role_endpoints: dict[str, int] = {}
    # The panel that measures the kept problems (settings.measure_kept); none: not measured.
    panel_id: int | None = None
    settings: dict = {}
    seed_limit: int | None = None
    budget_max_calls: int | None = None
    budget_max_tokens: int | None = None
    budget_max_cost: Decimal | None = None
    launch: bool = False


class EvoSynCampaignOut(Schema):
    id: int
    name: str
    kind: str
    state: str
    state_reason: str
    seed_set: str
    endpoint: str
    role_endpoints: dict[str, int]
    seeds: int
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


def _campaign_out(esc: EvoSynCampaign) -> dict:
    c = esc.campaign
    return {
        "id": c.pk,
        "name": c.name,
        "kind": c.kind,
        "state": c.state,
        "state_reason": c.state_reason,
        "seed_set": c.seed_set.name if c.seed_set else "",
        "endpoint": c.evolver.name if c.evolver else "",
        "role_endpoints": c.role_endpoints or {},
        "seeds": esc.instances.filter(role=InstanceRole.SEED).count(),
        "settings": c.settings,
        "replayed": c.replayed,
        "budget_max_calls": c.budget_max_calls,
        "budget_max_tokens": c.budget_max_tokens,
        "budget_max_cost": c.budget_max_cost,
        "created_at": c.created_at,
        "url": reverse("evosyn:campaign_detail", args=[c.pk]),
    }


def _unknown_references(payload: EvoSynCampaignIn) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    if not ProblemSet.objects.filter(name=payload.seed_set).exists():
        errors["seed_set"] = [f"seed set {payload.seed_set!r} does not exist"]
    if not ModelEndpoint.objects.filter(pk=payload.endpoint_id).exists():
        errors["endpoint_id"] = [f"endpoint {payload.endpoint_id} does not exist"]
    for role, endpoint_id in payload.role_endpoints.items():
        if role not in ROLES:
            errors.setdefault("role_endpoints", []).append(
                f"unknown role {role!r} (roles: {', '.join(ROLES)})"
            )
        elif not ModelEndpoint.objects.filter(pk=endpoint_id).exists():
            errors.setdefault("role_endpoints", []).append(
                f"role {role}: endpoint {endpoint_id} does not exist"
            )
    if payload.panel_id is not None and not Panel.objects.filter(pk=payload.panel_id).exists():
        errors["panel_id"] = [f"panel {payload.panel_id} does not exist"]
    return errors


@router.post("/evosyn/campaigns", response={201: EvoSynCampaignOut, 400: ErrorOut})
def create_campaign(request, payload: EvoSynCampaignIn):
    """Admins only. Unknown seed set, endpoint or role → 400 naming the field; a bad setting →
    400 whose ``errors`` are keyed by the setting's name. Nothing is created on any 400."""
    _require(request, ADMIN)
    missing = _unknown_references(payload)
    if missing:
        return Status(400, {"detail": "unknown references", "errors": missing})
    try:
        # Create and launch together: a launch that fails leaves no draft behind.
        with transaction.atomic():
            campaign = services.evosyn_campaign_create(
                name=payload.name,
                seed_set=ProblemSet.objects.get(name=payload.seed_set),
                endpoint=ModelEndpoint.objects.get(pk=payload.endpoint_id),
                settings=payload.settings,
                seed_limit=payload.seed_limit,
                role_endpoints=payload.role_endpoints,
                panel=Panel.objects.get(pk=payload.panel_id) if payload.panel_id else None,
                budget_max_calls=payload.budget_max_calls,
                budget_max_tokens=payload.budget_max_tokens,
                budget_max_cost=payload.budget_max_cost,
                created_by=request.user,
            )
            if payload.launch:
                campaign_services.campaign_launch(campaign_id=campaign.pk)
    except ValidationError as exc:
        return Status(400, {"detail": "invalid campaign", "errors": exc.message_dict})
    return Status(201, _campaign_out(selectors.evosyn_get(campaign_id=campaign.pk)))


@router.get("/evosyn/campaigns/{campaign_id}", response=EvoSynCampaignOut)
def get_campaign(request, campaign_id: int):
    _require(request, ADMIN, CURATOR)
    try:
        return _campaign_out(selectors.evosyn_get(campaign_id=campaign_id))
    except EvoSynCampaign.DoesNotExist:
        raise HttpError(404, "no EvoSyn campaign with this id") from None
