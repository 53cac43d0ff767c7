"""X-Coder campaigns over HTTP (django-ninja): create (optionally launch), read one, list its
tasks.

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
from evolution.measurement import selectors as measurement_selectors
from evolution.models import ModelEndpoint, Panel, ProblemSet
from evolution.services import campaigns as campaign_services

from . import selectors, services
from .config import XcoderSettings
from .kind import kept_problems
from .models import XcoderCampaign

router = Router(tags=["xcoder"])


def _require(request, *roles: str) -> None:
    if not any(has_role(request.user, r) for r in roles):
        raise HttpError(403, "your role does not allow this operation")


class XcoderCampaignIn(Schema):
    name: str
    seed_set: str
    generator_endpoint_id: int
    solver_endpoint_ids: list[int]
    # The panel that measures the accepted problems (settings.measure_kept); none: not measured.
    panel_id: int | None = None
    settings: dict = {}
    seed_limit: int | None = None
    budget_max_calls: int | None = None
    budget_max_tokens: int | None = None
    budget_max_cost: Decimal | None = None
    launch: bool = False


class XcoderMeasurementOut(Schema):
    panel: str | None
    skip_reason: str
    kept: int
    measured: int
    failed: int


class XcoderCampaignOut(Schema):
    id: int
    name: str
    kind: str
    state: str
    state_reason: str
    seed_set: str
    problem_set: str
    generator_endpoint: str
    solver_endpoints: list[str]
    settings: dict
    task_counts: dict[str, int]
    accepted_problems: list[str]
    measurement: XcoderMeasurementOut
    replayed: bool
    budget_max_calls: int | None
    budget_max_tokens: int | None
    budget_max_cost: Decimal | None
    created_at: datetime
    url: str


class XcoderTaskOut(Schema):
    index: int
    style: str
    status: str
    title: str
    reason_code: str
    reason: str
    problem: str | None
    url: str


class XcoderErrorOut(Schema):
    detail: str
    errors: dict = {}


def _campaign_out(xc: XcoderCampaign) -> dict:
    c = xc.campaign
    kept = kept_problems(c)
    measured = measurement_selectors.campaign_context(
        c,
        enabled=XcoderSettings.from_dict(c.settings).measure_kept,
        kept_count=kept.count(),
    )
    return {
        "id": c.pk,
        "name": c.name,
        "kind": c.kind,
        "state": c.state,
        "state_reason": c.state_reason,
        "seed_set": c.seed_set.name if c.seed_set else "",
        "problem_set": xc.problem_set.name if xc.problem_set_id else "",
        "generator_endpoint": xc.generator_endpoint.name,
        "solver_endpoints": list(
            xc.solver_endpoints.order_by("name").values_list("name", flat=True)
        ),
        "settings": c.settings,
        "task_counts": selectors.status_counts(xc),
        "accepted_problems": list(kept.order_by("id").values_list("public_id", flat=True)),
        "measurement": {
            "panel": measured["panel"].name if measured["panel"] else None,
            "skip_reason": measured["skip_reason"],
            "kept": measured["kept"],
            "measured": measured["measured"],
            "failed": measured["failed"],
        },
        "replayed": c.replayed,
        "budget_max_calls": c.budget_max_calls,
        "budget_max_tokens": c.budget_max_tokens,
        "budget_max_cost": c.budget_max_cost,
        "created_at": c.created_at,
        "url": reverse("xcoder:campaign_detail", args=[c.pk]),
    }


def _resolve(payload: XcoderCampaignIn) -> tuple[dict, dict[str, list[str]]]:
    """The referenced rows by field name, and an error per reference that does not exist."""
    found: dict = {"seed_set": ProblemSet.objects.filter(name=payload.seed_set).first()}
    errors: dict[str, list[str]] = {}
    if found["seed_set"] is None:
        errors["seed_set"] = [f"seed set {payload.seed_set!r} does not exist"]
    found["generator"] = ModelEndpoint.objects.filter(pk=payload.generator_endpoint_id).first()
    if found["generator"] is None:
        errors["generator_endpoint_id"] = [
            f"endpoint {payload.generator_endpoint_id} does not exist"
        ]
    solvers = ModelEndpoint.objects.in_bulk(payload.solver_endpoint_ids)
    missing = [pk for pk in payload.solver_endpoint_ids if pk not in solvers]
    if missing:
        errors["solver_endpoint_ids"] = [f"endpoint {pk} does not exist" for pk in missing]
    found["solvers"] = [solvers[pk] for pk in payload.solver_endpoint_ids if pk in solvers]
    found["panel"] = None
    if payload.panel_id is not None:
        found["panel"] = Panel.objects.filter(pk=payload.panel_id).first()
        if found["panel"] is None:
            errors["panel_id"] = [f"panel {payload.panel_id} does not exist"]
    return found, errors


@router.post("/xcoder/campaigns", response={201: XcoderCampaignOut, 400: XcoderErrorOut})
def create_campaign(request, payload: XcoderCampaignIn):
    """Admins only. Unknown seed set, endpoint or panel → 400 naming the field; a bad setting →
    400 whose ``errors`` are keyed by the setting's name. Nothing is created on any 400."""
    _require(request, ADMIN)
    found, missing = _resolve(payload)
    if missing:
        return Status(400, {"detail": "unknown references", "errors": missing})
    try:
        # Create and launch together: a launch that fails leaves no draft behind.
        with transaction.atomic():
            campaign = services.xcoder_campaign_create(
                name=payload.name,
                seed_set=found["seed_set"],
                generator_endpoint=found["generator"],
                solver_endpoints=found["solvers"],
                settings=payload.settings,
                seed_limit=payload.seed_limit,
                budget_max_calls=payload.budget_max_calls,
                budget_max_tokens=payload.budget_max_tokens,
                budget_max_cost=payload.budget_max_cost,
                created_by=request.user,
                panel=found["panel"],
            )
            if payload.launch:
                campaign_services.campaign_launch(campaign_id=campaign.pk)
    except ValidationError as exc:
        return Status(400, {"detail": "invalid campaign", "errors": exc.message_dict})
    return Status(201, _campaign_out(selectors.xcoder_get(campaign_id=campaign.pk)))


def _get(campaign_id: int) -> XcoderCampaign:
    try:
        return selectors.xcoder_get(campaign_id=campaign_id)
    except XcoderCampaign.DoesNotExist:
        raise HttpError(404, "no X-Coder campaign with this id") from None


@router.get("/xcoder/campaigns/{campaign_id}", response=XcoderCampaignOut)
def get_campaign(request, campaign_id: int):
    """Admins and curators: the campaign, its task counts, accepted problems and the panel
    measurement of those problems."""
    _require(request, ADMIN, CURATOR)
    return _campaign_out(_get(campaign_id))


@router.get("/xcoder/campaigns/{campaign_id}/tasks", response=list[XcoderTaskOut])
def list_tasks(request, campaign_id: int):
    """Admins and curators: every task in index order with its status and reason."""
    _require(request, ADMIN, CURATOR)
    xc = _get(campaign_id)
    return [
        {
            "index": t.index,
            "style": t.style,
            "status": t.status,
            "title": t.title,
            "reason_code": t.reason_code,
            "reason": t.reason,
            "problem": t.problem.public_id if t.problem_id else None,
            "url": reverse("xcoder:task_detail", args=[xc.pk, t.index]),
        }
        for t in selectors.task_list(xc)
    ]
