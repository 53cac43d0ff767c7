"""Campaigns, endpoints and panels over HTTP (django-ninja). Keys never travel: an endpoint
only names the environment variable holding its key, and the API says whether it is set."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema, Status

from accounts.roles import ADMIN, CURATOR

from .. import selectors
from ..benchevolver import api as benchevolver_api
from ..campaign_api import ErrorOut, require
from ..models import Campaign, ModelEndpoint, Panel, PanelMember
from ..policy import secrets
from ..services import campaigns as campaign_services

router = Router(tags=["campaigns"])


class EndpointIn(Schema):
    name: str
    provider: str = "openai"
    base_url: str = ""
    model: str
    api_key_env: str = ""
    # None: the campaign's temperature; omit_temperature: send none (APIs that take only 1).
    temperature: float | None = None
    omit_temperature: bool = False
    top_p: float | None = None
    max_tokens: int | None = None
    reasoning_effort: str = ""
    extra_params: dict = {}
    concurrency_limit: int = 4
    timeout_s: float = 600.0
    max_retries: int = 5
    price_in_per_1k: Decimal = Decimal(0)
    price_out_per_1k: Decimal = Decimal(0)
    cassette: str = ""


class EndpointOut(Schema):
    id: int
    name: str
    provider: str
    base_url: str
    model: str
    api_key_env: str
    api_key_set: bool
    temperature: float | None
    omit_temperature: bool
    top_p: float | None
    max_tokens: int | None
    reasoning_effort: str
    concurrency_limit: int
    timeout_s: float
    price_in_per_1k: Decimal
    price_out_per_1k: Decimal

    @staticmethod
    def resolve_api_key_set(obj) -> bool:
        # Only ever answered for names the key policy allows: no oracle for other variables.
        return secrets.key_env_is_set(obj.api_key_env)


class PanelMemberIn(Schema):
    endpoint_id: int
    # K for this model (1-1000, as the admin page's form); None: the campaign's target_eval_k.
    attempts: Annotated[int, Field(ge=1, le=1000)] | None = None


class PanelIn(Schema):
    name: str
    members: list[PanelMemberIn]


class PanelMemberOut(Schema):
    endpoint: str
    attempts: int | None


class PanelOut(Schema):
    id: int
    name: str
    members: list[PanelMemberOut]

    @staticmethod
    def resolve_members(obj) -> list[dict]:
        return [
            {"endpoint": m.endpoint.name, "attempts": m.attempts}
            for m in obj.members.select_related("endpoint")
        ]


class CampaignOut(Schema):
    id: int
    name: str
    kind: str
    state: str
    state_reason: str
    seed_set: str
    evolver: str
    panel: str
    settings: dict
    replayed: bool
    calls_made: int
    tokens_in: int
    tokens_out: int
    cost: Decimal
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None

    @staticmethod
    def resolve_seed_set(obj) -> str:
        return obj.seed_set.name if obj.seed_set else ""

    @staticmethod
    def resolve_evolver(obj) -> str:
        return obj.evolver.name if obj.evolver else ""

    @staticmethod
    def resolve_panel(obj) -> str:
        return obj.panel.name if obj.panel else ""


@router.get("/endpoints", response=list[EndpointOut])
def endpoint_list(request):
    require(request, ADMIN, CURATOR)
    return ModelEndpoint.objects.all()


@router.post("/endpoints", response={201: EndpointOut, 400: ErrorOut})
def endpoint_create(request, payload: EndpointIn):
    require(request, ADMIN)
    endpoint = ModelEndpoint(**payload.dict())
    try:
        endpoint.full_clean()
        endpoint.save()
    except ValidationError as exc:
        return Status(400, {"detail": "invalid endpoint", "errors": exc.message_dict})
    return Status(201, endpoint)


@router.get("/panels", response=list[PanelOut])
def panel_list(request):
    require(request, ADMIN, CURATOR)
    return Panel.objects.prefetch_related("members__endpoint")


@router.post("/panels", response={201: PanelOut, 400: ErrorOut})
def panel_create(request, payload: PanelIn):
    require(request, ADMIN)
    if not payload.members:
        return Status(400, {"detail": "a panel needs at least one target endpoint"})
    try:
        with transaction.atomic():
            panel = Panel.objects.create(name=payload.name)
            for member in payload.members:
                endpoint = ModelEndpoint.objects.filter(pk=member.endpoint_id).first()
                if endpoint is None:
                    raise ValidationError(
                        {"members": [f"endpoint {member.endpoint_id} does not exist"]}
                    )
                PanelMember.objects.create(panel=panel, endpoint=endpoint, attempts=member.attempts)
    except ValidationError as exc:
        return Status(400, {"detail": "invalid panel", "errors": exc.message_dict})
    except IntegrityError as exc:
        return Status(400, {"detail": f"invalid panel: {exc.__class__.__name__}"})
    return Status(201, panel)


@router.get("/campaigns", response=list[CampaignOut])
def campaign_list(request):
    require(request, ADMIN, CURATOR)
    return selectors.campaign_list()


# BenchEvolver's create operation, on the path it always had (one path, one router).
router.post("/campaigns", response={201: CampaignOut, 400: ErrorOut})(
    benchevolver_api.campaign_create
)


@router.get("/campaigns/{campaign_id}", response=CampaignOut)
def campaign_get(request, campaign_id: int):
    require(request, ADMIN, CURATOR)
    return get_object_or_404(selectors.campaign_list(), pk=campaign_id)


router.get("/campaigns/{campaign_id}/progress")(benchevolver_api.campaign_progress)


def _control(request, campaign_id: int, service):
    require(request, ADMIN)
    get_object_or_404(Campaign, pk=campaign_id)
    try:
        return Status(200, service(campaign_id=campaign_id))
    except campaign_services.TransitionError as exc:
        return Status(409, {"detail": str(exc)})


@router.post("/campaigns/{campaign_id}/launch", response={200: CampaignOut, 409: ErrorOut})
def campaign_launch(request, campaign_id: int):
    return _control(request, campaign_id, campaign_services.campaign_launch)


@router.post("/campaigns/{campaign_id}/pause", response={200: CampaignOut, 409: ErrorOut})
def campaign_pause(request, campaign_id: int):
    return _control(request, campaign_id, campaign_services.campaign_pause)


@router.post("/campaigns/{campaign_id}/resume", response={200: CampaignOut, 409: ErrorOut})
def campaign_resume(request, campaign_id: int):
    return _control(request, campaign_id, campaign_services.campaign_resume)


@router.post("/campaigns/{campaign_id}/cancel", response={200: CampaignOut, 409: ErrorOut})
def campaign_cancel(request, campaign_id: int):
    return _control(request, campaign_id, campaign_services.campaign_cancel)
