"""Services of reasoning campaigns besides their stages (``reasoning/stages/``): creation, advancing
one step, human overrides with the EMA recomputed, running in this process."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from evolution.models import Campaign, ModelEndpoint
from evolution.models.campaigns import CampaignKind
from evolution.services import campaigns as campaign_services

from .config import ReasoningSettings
from .engine import ema as ema_engine
from .models import ItemStatus, JudgeSeat, ReasoningCampaign, ReasoningItem, RunStatus
from .stages.close_level import _scores, _store_state, render_run_report
from .stages.common import _log


@transaction.atomic
def reasoning_campaign_create(
    *,
    name: str,
    generation_endpoint: ModelEndpoint,
    answering_endpoint: ModelEndpoint,
    judge_endpoints: list[ModelEndpoint],
    quality_endpoint: ModelEndpoint | None = None,
    settings: dict | None = None,
    created_by=None,
    **budget,
) -> Campaign:
    """Validate the settings (ValidationError names each bad key) and create a draft campaign of
    kind "reasoning" with its role endpoints and judge seats (first judge = "evaluation").
    ``budget``: the campaign's ``budget_max_calls`` / ``_tokens`` / ``_cost``."""
    validated = campaign_services.campaign_settings_validate(
        ReasoningSettings, name=name, settings=settings
    )
    judges = list(judge_endpoints)
    if not judges:
        raise ValidationError({"judge_endpoints": ["choose at least one evaluation model"]})
    if len({j.pk for j in judges}) != len(judges):
        raise ValidationError({"judge_endpoints": ["a judge model is listed twice"]})
    endpoints = [generation_endpoint, answering_endpoint, *judges]
    if quality_endpoint is not None:
        endpoints.append(quality_endpoint)
    campaign = campaign_services.campaign_record_create(
        kind=CampaignKind.REASONING,
        name=name,
        validated=validated,
        endpoints=endpoints,
        role_endpoints={
            "generation": generation_endpoint.pk,
            "answering": answering_endpoint.pk,
            "evaluation": judges[0].pk,
            **({"quality": quality_endpoint.pk} if quality_endpoint else {}),
        },
        created_by=created_by,
        **budget,
    )
    rc = ReasoningCampaign.objects.create(
        campaign=campaign,
        generation_endpoint=generation_endpoint,
        answering_endpoint=answering_endpoint,
        quality_endpoint=quality_endpoint,
        current_difficulty=validated.difficulty_start,
    )
    JudgeSeat.objects.bulk_create(
        JudgeSeat(reasoning=rc, endpoint=endpoint, position=i) for i, endpoint in enumerate(judges)
    )
    return campaign


@transaction.atomic
def item_override_score(*, item_id: int, score: float | None, reason: str, user) -> ReasoningItem:
    """Replace the judges' score of a judged item (1.0 correct, 0.0 incorrect; None removes the
    override) and recompute every EMA from the scores. ValidationError on a bad request."""
    item = ReasoningItem.objects.select_related("run", "reasoning").get(pk=item_id)
    rc = ReasoningCampaign.objects.select_for_update().get(pk=item.reasoning_id)
    if item.status != ItemStatus.JUDGED:
        raise ValidationError("Only judged items can be overridden.")
    if score is not None and score not in (0.0, 1.0):
        raise ValidationError("The override must be correct (1) or incorrect (0).")
    if not (reason or "").strip():
        raise ValidationError("Say why the judge's score is overridden.")
    previous = item.score
    item.override_score = score
    item.override_reason = reason.strip() if score is not None else ""
    item.override_by = user if score is not None else None
    item.override_at = timezone.now() if score is not None else None
    item.save(update_fields=["override_score", "override_reason", "override_by", "override_at"])
    state = reasoning_state_recompute(reasoning=rc)
    _log(
        rc.pk,
        "score_overridden" if score is not None else "override_removed",
        {
            "run": item.run.number,
            "tags": {
                "reasoning_type": item.reasoning_type,
                "difficulty": item.difficulty,
                "question_index": item.question_index,
            },
            "judge_score": item.judge_score,
            "previous_score": previous,
            "score": item.score,
            "reason": reason.strip(),
            "by": getattr(user, "username", ""),
            "ema": state.ema,
        },
        run=item.run,
        item=item,
    )
    return item


def reasoning_state_recompute(*, reasoning: ReasoningCampaign) -> ema_engine.RunState:
    """Recompute the run state from the item scores (overrides included): every closed level's
    score and EMA, every finished run's score, per-type scores, snapshot and report. The
    current difficulty (the resume point) is kept. Call inside a transaction holding the
    campaign row."""
    rc = reasoning
    s = ReasoningSettings.from_dict(rc.campaign.settings)
    runs = list(rc.runs.order_by("number").prefetch_related("items"))
    scores = []
    for run in runs:
        items = list(run.items.all())
        level_scores = [
            (
                level["difficulty"],
                ema_engine.mean(_scores(i for i in items if i.difficulty == level["difficulty"])),
            )
            for level in run.levels
        ]
        finished = run.status == RunStatus.COMPLETED
        type_scores = {
            entry["name"]: ema_engine.mean(
                _scores(i for i in items if i.reasoning_type == entry["name"])
            )
            for entry in run.plan
        }
        scores.append(
            ema_engine.RunScores(
                level_scores=level_scores,
                finished=finished,
                run_score=ema_engine.mean(_scores(items)) if finished else None,
                type_scores=type_scores if finished else {},
            )
        )
    state, snapshots = ema_engine.fold_runs(scores, s.alpha)
    state.current_difficulty = rc.current_difficulty
    for run, run_scores, snap in zip(runs, scores, snapshots, strict=True):
        run.levels = [
            {**level, "score": score, "ema": level_ema}
            for level, (_, score), level_ema in zip(
                run.levels, run_scores.level_scores, snap.level_emas, strict=True
            )
        ]
        if run_scores.finished:
            run.score = run_scores.run_score
            run.type_scores = run_scores.type_scores
            run.ema_after = snap.ema
            run.ema_by_type_after = snap.ema_by_reasoning_type
            run.ema_by_difficulty_after = snap.ema_by_difficulty
            run.report = render_run_report(rc, run, s)
        run.save()
    _store_state(rc, state)
    return state
