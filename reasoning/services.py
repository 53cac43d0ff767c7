"""Services of reasoning campaigns besides their stages (``reasoning/stages/``): creation (in a
series, new or continued), human overrides with the series' EMAs recomputed."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from evolution.models import Campaign, ModelEndpoint
from evolution.models.campaigns import CampaignKind
from evolution.services import campaigns as campaign_services

from .config import ReasoningSettings
from .engine import ema as ema_engine
from .models import (
    ItemStatus,
    JudgeSeat,
    ReasoningCampaign,
    ReasoningItem,
    ReasoningSeries,
    RunStatus,
)
from .stages import state as series_state
from .stages.close_level import item_scores, render_run_report
from .stages.common import log_event

SERIES_NAME_MAX = 200
SERIES_SLUG_MAX = 80


def series_find(name: str) -> ReasoningSeries | None:
    """The series called ``name`` (or whose slug it is), if any."""
    name = (name or "").strip()
    if not name:
        return None
    return (
        ReasoningSeries.objects.filter(name__iexact=name).first()
        or ReasoningSeries.objects.filter(slug=slugify(name)).first()
    )


def _unique(field: str, wanted: str, limit: int) -> str:
    value, n = wanted[:limit], 1
    while ReasoningSeries.objects.filter(**{f"{field}__iexact": value}).exists():
        n += 1
        suffix = f"-{n}" if field == "slug" else f" ({n})"
        value = wanted[: limit - len(suffix)] + suffix
    return value


def series_create(*, name: str) -> ReasoningSeries:
    """A new series called ``name``, in the initial state; a suffix keeps its name and slug
    unique (a series of that name made meanwhile by a concurrent request counts as taken)."""
    name = " ".join((name or "").split())
    if not name:
        raise ValidationError({"series": ["name the series"]})
    for attempt in range(3):
        unique = _unique("name", name, SERIES_NAME_MAX)
        series = ReasoningSeries(
            name=unique, slug=_unique("slug", slugify(unique) or "series", SERIES_SLUG_MAX)
        )
        try:
            with transaction.atomic():
                series.save()
        except IntegrityError:
            if attempt == 2:
                raise
            continue
        return series
    raise AssertionError("unreachable")


def series_get_or_create(name: str) -> ReasoningSeries:
    """The series ``name`` names (by name or slug), made when there is none; two requests
    naming the same new series both get the one made first."""
    found = series_find(name)
    if found is not None:
        return found
    name = " ".join(name.split())
    try:
        with transaction.atomic():
            return ReasoningSeries.objects.create(
                name=name[:SERIES_NAME_MAX],
                slug=_unique("slug", slugify(name) or "series", SERIES_SLUG_MAX),
            )
    except IntegrityError:
        found = series_find(name)
        if found is None:
            raise
        return found


@transaction.atomic
def reasoning_campaign_create(
    *,
    name: str,
    generation_endpoint: ModelEndpoint,
    answering_endpoint: ModelEndpoint,
    judge_endpoints: list[ModelEndpoint],
    quality_endpoint: ModelEndpoint | None = None,
    settings: dict | None = None,
    series: str = "",
    created_by=None,
    **budget,
) -> Campaign:
    """Validate the settings (ValidationError names each bad key) and create a draft campaign of
    kind "reasoning" with its role endpoints and judge seats (first judge = "evaluation").
    ``series``: the benchmark it continues (its EMAs, prior questions and run numbers; a
    series of that name is created when none exists); empty: a new series named after the
    campaign. ``budget``: the campaign's ``budget_max_calls`` / ``_tokens`` / ``_cost``."""
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
    if len((series or "").strip()) > SERIES_NAME_MAX:
        raise ValidationError({"series": [f"at most {SERIES_NAME_MAX} characters"]})
    found = series_get_or_create(series) if (series or "").strip() else series_create(name=name)
    # The campaign shows the series' state until it saves its own (its runs start from the
    # series' state as it is then: ``stages/start_run.py``).
    rc = ReasoningCampaign.objects.create(
        campaign=campaign,
        series=found,
        generation_endpoint=generation_endpoint,
        answering_endpoint=answering_endpoint,
        quality_endpoint=quality_endpoint,
        ema=found.ema,
        run_count=found.run_count,
        ema_by_reasoning_type=found.ema_by_reasoning_type,
        ema_by_difficulty=found.ema_by_difficulty,
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
    series, rc = series_state.lock(item.reasoning_id)
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
    state = series_state_recompute(series=series)
    log_event(
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


def series_state_recompute(*, series: ReasoningSeries) -> ema_engine.RunState:
    """Recompute the series' run state from the item scores (overrides included), from the
    state it was given (``base_state``: an imported state.json) through every run of every
    campaign of the series in run order, each with its campaign's alpha: every closed level's
    score and EMA, every finished run's score, per-type scores, snapshot and report, each
    campaign's copy of the state (as after its last run) and the series'. The resume points
    (current difficulties) are kept. Call inside a transaction holding the series row."""
    runs = list(
        series.runs.select_related("reasoning__campaign")
        .order_by("number")
        .prefetch_related("items")
    )
    settings_of = {}
    scores = []
    for run in runs:
        rc = run.reasoning
        if rc.pk not in settings_of:
            settings_of[rc.pk] = ReasoningSettings.from_dict(rc.campaign.settings)
        items = list(run.items.all())
        level_scores = [
            (
                level["difficulty"],
                ema_engine.mean(
                    item_scores(i for i in items if i.difficulty == level["difficulty"])
                ),
            )
            for level in run.levels
        ]
        finished = run.status == RunStatus.COMPLETED
        type_scores = {
            entry["name"]: ema_engine.mean(
                item_scores(i for i in items if i.reasoning_type == entry["name"])
            )
            for entry in run.plan
        }
        scores.append(
            ema_engine.RunScores(
                level_scores=level_scores,
                finished=finished,
                run_score=ema_engine.mean(item_scores(items)) if finished else None,
                type_scores=type_scores if finished else {},
                alpha=settings_of[rc.pk].alpha,
            )
        )
    base = ema_engine.RunState.from_json(series.base_state) if series.base_state else None
    start = base or ema_engine.RunState()
    state, snapshots = ema_engine.fold_runs(scores, ReasoningSettings().alpha, start=base)
    after: dict[int, ema_engine.Snapshot] = {}
    run_counts: dict[int, int] = {}
    completed = start.run_count
    for run, run_scores, snap in zip(runs, scores, snapshots, strict=True):
        completed += run_scores.finished
        run_counts[run.reasoning_id] = completed
        s = settings_of[run.reasoning_id]
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
            run.report = render_run_report(run.reasoning, run, s, run_count=completed)
        run.save()
        after[run.reasoning_id] = snap
    for rc in ReasoningCampaign.objects.select_for_update().filter(pk__in=list(after)):
        snap = after[rc.pk]
        series_state.state_store(
            rc,
            ema_engine.RunState(
                ema=snap.ema,
                run_count=run_counts[rc.pk],
                current_difficulty=rc.current_difficulty,
                ema_by_reasoning_type=dict(snap.ema_by_reasoning_type),
                ema_by_difficulty=dict(snap.ema_by_difficulty),
            ),
        )
    state.current_difficulty = series.current_difficulty
    _assign_series(series, state)
    return state


def _assign_series(series: ReasoningSeries, state: ema_engine.RunState) -> None:
    for field in series_state.STATE_FIELDS:
        setattr(series, field, getattr(state, field))
    series.state_saved_at = timezone.now()
    series.save(update_fields=[*series_state.STATE_FIELDS, "state_saved_at"])
