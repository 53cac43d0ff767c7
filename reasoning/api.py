"""Reasoning campaigns over HTTP (django-ninja): create, read state and items, override."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404
from ninja import Router, Schema, Status
from ninja.errors import HttpError

from accounts.roles import ADMIN, CURATOR
from evolution.campaign_api import (
    BudgetCalls,
    BudgetCost,
    BudgetTokens,
    CampaignName,
    get_or_404,
    require,
)
from evolution.models import ModelEndpoint
from evolution.services import campaigns as campaign_services

from . import selectors, services
from .models import ReasoningCampaign, ReasoningItem, ReasoningSeries

router = Router(tags=["reasoning"])


def _rc(campaign_id: int) -> ReasoningCampaign:
    return get_or_404(
        selectors.reasoning_get, campaign_id, ReasoningCampaign.DoesNotExist, "reasoning"
    )


class ReasoningCampaignIn(Schema):
    name: CampaignName
    generation_endpoint_id: int
    answering_endpoint_id: int
    judge_endpoint_ids: list[int]
    quality_endpoint_id: int | None = None
    # The benchmark the campaign continues (a series' name or slug; a new name starts one);
    # empty: a new series named after the campaign.
    series: str = ""
    settings: dict = {}
    budget_max_calls: BudgetCalls | None = None
    budget_max_tokens: BudgetTokens | None = None
    budget_max_cost: BudgetCost | None = None
    # Launched in the same transaction as it is created (nothing is created if it fails).
    launch: bool = False


class RunStateOut(Schema):
    ema: float | None
    run_count: int
    current_difficulty: int
    ema_by_reasoning_type: dict[str, float]
    ema_by_difficulty: dict[str, float]
    saved_at: str | None


class ReasoningRunOut(Schema):
    number: int
    status: str
    score: float | None
    ema_after: float | None
    levels: list[dict]
    plan: list[dict]
    stop_reason: str
    started_at: datetime
    finished_at: datetime | None


class SeriesCampaignOut(Schema):
    id: int
    name: str
    state: str
    runs: list[int]
    ema_start: float | None
    ema_end: float | None


class SeriesOut(Schema):
    name: str
    slug: str
    ema: float | None
    run_count: int
    current_difficulty: int
    ema_by_reasoning_type: dict[str, float]
    ema_by_difficulty: dict[str, float]
    saved_at: str | None
    imported_examples: int
    holder: dict | None
    campaigns: list[SeriesCampaignOut]


class ReasoningCampaignOut(Schema):
    id: int
    name: str
    state: str
    state_reason: str
    replayed: bool
    settings: dict
    run_state: RunStateOut
    runs: list[ReasoningRunOut]
    series: SeriesOut


class ItemOut(Schema):
    id: int
    run: int
    reasoning_type: str
    difficulty: int
    question_index: int
    status: str
    question: str
    answer: str
    score: float | None
    judge_score: float | None
    rationale: str
    parse_failures: int
    disagreement: bool
    verdicts: list[dict]
    similarity: float | None
    regenerations: int
    overridden: bool
    created_at: datetime


class ReasoningOverrideIn(Schema):
    score: float | None
    reason: str


def _campaign_out(rc: ReasoningCampaign) -> dict:
    c = rc.campaign
    return {
        "id": c.pk,
        "name": c.name,
        "state": c.state,
        "state_reason": c.state_reason,
        "replayed": c.replayed,
        "settings": c.settings,
        "run_state": selectors.run_state(rc),
        "runs": list(selectors.run_list(rc)),
        "series": _series_out(rc.series),
    }


def _series_out(series: ReasoningSeries) -> dict:
    return {
        **selectors.series_state(series),
        "campaigns": selectors.series_campaigns(series),
    }


def _item_out(item: ReasoningItem) -> dict:
    return {
        "id": item.pk,
        "run": item.run.number,
        "reasoning_type": item.reasoning_type,
        "difficulty": item.difficulty,
        "question_index": item.question_index,
        "status": item.status,
        "question": item.question,
        "answer": item.answer,
        "score": item.score,
        "judge_score": item.judge_score,
        "rationale": item.rationale,
        "parse_failures": item.parse_failures,
        "disagreement": item.disagreement,
        "verdicts": item.verdicts,
        "similarity": item.similarity,
        "regenerations": item.regenerations,
        "overridden": item.is_overridden,
        "created_at": item.created_at,
    }


@router.post("/reasoning/campaigns", response={201: ReasoningCampaignOut})
def create_campaign(request, payload: ReasoningCampaignIn):
    require(request, ADMIN)

    def endpoint(pk: int | None) -> ModelEndpoint | None:
        if pk is None:
            return None
        found = ModelEndpoint.objects.filter(pk=pk).first()
        if found is None:
            raise HttpError(422, f"endpoint {pk} does not exist")
        return found

    try:
        with transaction.atomic():
            campaign = _create(payload, endpoint, request.user)
    except ValidationError as exc:
        raise HttpError(422, "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items()))
    return Status(201, _campaign_out(_rc(campaign.pk)))


def _create(payload: ReasoningCampaignIn, endpoint, user):
    campaign = services.reasoning_campaign_create(
        name=payload.name,
        generation_endpoint=endpoint(payload.generation_endpoint_id),
        answering_endpoint=endpoint(payload.answering_endpoint_id),
        judge_endpoints=[endpoint(pk) for pk in payload.judge_endpoint_ids],
        quality_endpoint=endpoint(payload.quality_endpoint_id),
        settings=payload.settings,
        series=payload.series,
        budget_max_calls=payload.budget_max_calls,
        budget_max_tokens=payload.budget_max_tokens,
        budget_max_cost=payload.budget_max_cost,
        created_by=user,
    )
    if payload.launch:
        campaign_services.campaign_launch(campaign_id=campaign.pk)
    return campaign


@router.get("/reasoning/campaigns/{campaign_id}", response=ReasoningCampaignOut)
def get_campaign(request, campaign_id: int):
    require(request, ADMIN, CURATOR)
    return _campaign_out(_rc(campaign_id))


@router.get("/reasoning/campaigns/{campaign_id}/items", response=list[ItemOut])
def list_items(
    request,
    campaign_id: int,
    run: int | None = None,
    reasoning_type: str | None = None,
    difficulty: int | None = None,
):
    require(request, ADMIN, CURATOR)
    rc = _rc(campaign_id)
    items = selectors.item_list(
        rc, run_number=run, reasoning_type=reasoning_type, difficulty=difficulty
    )
    return [_item_out(i) for i in items]


@router.get("/reasoning/campaigns/{campaign_id}/matrix")
def get_matrix(request, campaign_id: int, run: int | None = None) -> dict:
    require(request, ADMIN, CURATOR)
    rc = _rc(campaign_id)
    return {"matrix": selectors.matrix(rc, run_number=run), "ema": selectors.ema_series(rc)}


@router.post("/reasoning/items/{item_id}/override", response=ItemOut)
def override_item(request, item_id: int, payload: ReasoningOverrideIn):
    require(request, ADMIN, CURATOR)
    get_object_or_404(ReasoningItem, pk=item_id)
    try:
        item = services.item_override_score(
            item_id=item_id, score=payload.score, reason=payload.reason, user=request.user
        )
    except ValidationError as exc:
        raise HttpError(422, " ".join(exc.messages))
    return _item_out(selectors.item_get(item_id=item.pk))


@router.get("/reasoning/series/{slug}", response=SeriesOut)
def get_series(request, slug: str):
    """A series: its state (the document's state.json) and its campaigns in order, with the
    overall EMA each started from and left."""
    require(request, ADMIN, CURATOR)
    try:
        series = selectors.series_get(slug=slug)
    except ReasoningSeries.DoesNotExist:
        raise HttpError(404, "no reasoning series with this slug") from None
    return _series_out(series)
