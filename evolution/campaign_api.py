"""What every campaign kind's HTTP API (django-ninja) shares: the role check, the error answer,
the input and output fields every campaign has, resolving the rows a payload names (an error
keyed by the field for each that does not exist), and the create (optionally launch) and get
operations. A kind's ``api.py`` declares only its own fields, how it resolves its references
and which create service it calls.

Launch, pause, resume and cancel are the shared ``/campaigns/{id}/<action>`` operations of
evolution's router: they work on every campaign kind. This module sits below BenchEvolver in the
platform's layers, beside the services it calls, so BenchEvolver's ``api.py`` builds on it as
every sibling's does.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Annotated

from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from ninja import Field, Schema, Status
from ninja.errors import HttpError

from accounts.roles import ADMIN, has_role

from .models import Campaign, ModelEndpoint, Panel, ProblemSet
from .services import campaigns as campaign_services


def require(request, *roles: str) -> None:
    if not any(has_role(request.user, r) for r in roles):
        raise HttpError(403, "your role does not allow this operation")


class ErrorOut(Schema):
    detail: str
    errors: dict = {}


# The bounds of a campaign's own fields, as the creation forms have them and within what the
# columns hold (``campaign_services.CAMPAIGN_BOUNDS``): a value past them is a 422 naming the
# field (and documented in the OpenAPI schema), never a 500 from the database.
CampaignName = Annotated[str, Field(min_length=1, max_length=200)]
SeedLimit = Annotated[int, Field(ge=1, le=campaign_services.INT_MAX)]
BudgetCalls = Annotated[int, Field(ge=1, le=campaign_services.INT_MAX)]
BudgetTokens = Annotated[int, Field(ge=1, le=campaign_services.BIGINT_MAX)]
BudgetCost = Annotated[Decimal, Field(ge=0, max_digits=12, decimal_places=4)]


class KindCampaignIn(Schema):
    """The fields every kind's creation payload has (a kind's schema adds its references)."""

    name: CampaignName
    seed_set: str
    settings: dict = {}
    seed_limit: SeedLimit | None = None
    budget_max_calls: BudgetCalls | None = None
    budget_max_tokens: BudgetTokens | None = None
    budget_max_cost: BudgetCost | None = None
    launch: bool = False

    def create_kwargs(self) -> dict:
        """What every kind's create service takes from the payload as it is."""
        return {
            "name": self.name,
            "settings": self.settings,
            "seed_limit": self.seed_limit,
            "budget_max_calls": self.budget_max_calls,
            "budget_max_tokens": self.budget_max_tokens,
            "budget_max_cost": self.budget_max_cost,
        }


class KindCampaignOut(Schema):
    """The fields every kind's campaign answer has (``campaign_fields``)."""

    id: int
    name: str
    kind: str
    state: str
    state_reason: str
    seed_set: str
    settings: dict
    replayed: bool
    budget_max_calls: int | None
    budget_max_tokens: int | None
    budget_max_cost: Decimal | None
    created_at: datetime
    url: str


def campaign_fields(campaign: Campaign) -> dict:
    """``KindCampaignOut``'s fields of ``campaign``; ``url`` is its kind's campaign page."""
    return {
        "id": campaign.pk,
        "name": campaign.name,
        "kind": campaign.kind,
        "state": campaign.state,
        "state_reason": campaign.state_reason,
        "seed_set": campaign.seed_set.name if campaign.seed_set else "",
        "settings": campaign.settings,
        "replayed": campaign.replayed,
        "budget_max_calls": campaign.budget_max_calls,
        "budget_max_tokens": campaign.budget_max_tokens,
        "budget_max_cost": campaign.budget_max_cost,
        "created_at": campaign.created_at,
        "url": reverse(f"{campaign.kind}:campaign_detail", args=[campaign.pk]),
    }


class References:
    """The rows a payload names, by field (``found``), and an error per field naming a row
    that does not exist (``errors``, the 400's ``errors``)."""

    def __init__(self):
        self.found: dict = {}
        self.errors: dict[str, list[str]] = {}

    def _add(self, field: str, row, message: str):
        self.found[field] = row
        if row is None:
            self.errors.setdefault(field, []).append(message)
        return row

    def problem_set(self, field: str, name: str | None, *, label: str = "problem set"):
        """None, without an error, when ``name`` is None (an optional set)."""
        if name is None:
            self.found[field] = None
            return None
        row = ProblemSet.objects.filter(name=name).first()
        return self._add(field, row, f"{label} {name!r} does not exist")

    def endpoint(self, field: str, pk: int):
        row = ModelEndpoint.objects.filter(pk=pk).first()
        return self._add(field, row, f"endpoint {pk} does not exist")

    def endpoints(self, field: str, pks: list[int]) -> list[ModelEndpoint]:
        """The endpoints in ``pks`` order; one error per id that does not exist."""
        rows = ModelEndpoint.objects.in_bulk(pks)
        for pk in pks:
            if pk not in rows:
                self.errors.setdefault(field, []).append(f"endpoint {pk} does not exist")
        self.found[field] = [rows[pk] for pk in pks if pk in rows]
        return self.found[field]

    def panel(self, field: str, pk: int | None):
        """None, without an error, when ``pk`` is None (no panel)."""
        if pk is None:
            self.found[field] = None
            return None
        row = Panel.objects.filter(pk=pk).first()
        return self._add(field, row, f"panel {pk} does not exist")


def create_campaign_response(
    request,
    payload: KindCampaignIn,
    references: References,
    create: Callable[..., Campaign],
    answer: Callable[[int], dict],
):
    """The create operation of every kind. Admins only. A reference that does not exist → 400
    naming the field; a bad setting → 400 whose ``errors`` are keyed by the setting's name.
    ``create(found, **common)`` makes the campaign from the rows found (``references.found``)
    and the payload's common fields with the requesting user (``common``: ``create_kwargs()``
    and ``created_by``); with ``launch`` it is launched in the same transaction, so a launch
    that fails leaves no draft behind: nothing is created on any 400. 201 with
    ``answer(campaign id)``."""
    require(request, ADMIN)
    if references.errors:
        return Status(400, {"detail": "unknown references", "errors": references.errors})
    try:
        with transaction.atomic():
            campaign = create(references.found, **payload.create_kwargs(), created_by=request.user)
            if payload.launch:
                campaign_services.campaign_launch(campaign_id=campaign.pk)
    except ValidationError as exc:
        return Status(400, {"detail": "invalid campaign", "errors": exc.message_dict})
    return Status(201, answer(campaign.pk))


def get_or_404(get: Callable[..., object], campaign_id: int, does_not_exist, label: str):
    """``get(campaign_id=...)``, or 404 "no <label> campaign with this id"."""
    try:
        return get(campaign_id=campaign_id)
    except does_not_exist:
        raise HttpError(404, f"no {label} campaign with this id") from None
