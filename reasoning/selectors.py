"""Reads of reasoning campaigns: lists, progress, the type x difficulty matrix, EMA series,
items, the result log. Views, the API and tests read through these."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from evolution.models import Campaign
from evolution.models.campaigns import CampaignKind

from .config import ReasoningSettings
from .engine import plan
from .models import (
    ImportedExample,
    ItemStatus,
    ReasoningCampaign,
    ReasoningItem,
    ReasoningRun,
    ReasoningSeries,
    ResultLogEntry,
    RunStatus,
)


def campaign_list() -> QuerySet[Campaign]:
    return (
        Campaign.objects.filter(kind=CampaignKind.REASONING)
        .select_related("reasoning", "reasoning__series")
        .annotate(item_count=Count("reasoning__items", distinct=True))
        .order_by("-created_at")
    )


def reasoning_get(*, campaign_id: int) -> ReasoningCampaign:
    """Raises ReasoningCampaign.DoesNotExist for other kinds or unknown ids."""
    return ReasoningCampaign.objects.select_related(
        "campaign",
        "series",
        "generation_endpoint",
        "answering_endpoint",
        "quality_endpoint",
    ).get(pk=campaign_id)


def settings_of(rc: ReasoningCampaign) -> ReasoningSettings:
    return ReasoningSettings.from_dict(rc.campaign.settings)


def judge_names(rc: ReasoningCampaign) -> list[str]:
    return [seat.endpoint.name for seat in rc.seats.select_related("endpoint")]


def run_state(rc: ReasoningCampaign) -> dict:
    """Section 6.1, as stored (the state.json of the document)."""
    return {
        "ema": rc.ema,
        "run_count": rc.run_count,
        "current_difficulty": rc.current_difficulty,
        "ema_by_reasoning_type": rc.ema_by_reasoning_type,
        "ema_by_difficulty": rc.ema_by_difficulty,
        "saved_at": rc.state_saved_at.isoformat() if rc.state_saved_at else None,
    }


def progress(rc: ReasoningCampaign) -> dict:
    """Counts for the live page and the API (a constant number of queries)."""
    s = settings_of(rc)
    by_status = dict(
        rc.items.values_list("status").annotate(n=Count("id")).values_list("status", "n")
    )
    current = rc.runs.filter(status="running").first()
    planned = done = 0
    if current is not None:
        planned = sum(1 for _ in plan.round_robin(s.difficulties, current.plan))
        done = current.items.exclude(status__in=[ItemStatus.GENERATED, ItemStatus.ANSWERED]).count()
    runs_done = rc.runs.filter(status=RunStatus.COMPLETED).count()
    fraction = (runs_done + (done / planned if planned else 0)) / s.runs
    campaign = rc.campaign
    return {
        "state": campaign.state,
        "state_reason": campaign.state_reason,
        "runs_total": s.runs,
        "runs_done": runs_done,
        "current_run": current.number if current else None,
        "current_difficulty": rc.current_difficulty,
        "run_items_done": done,
        "run_items_planned": planned,
        "percent": round(100 * min(1.0, fraction)),
        "items": {status: by_status.get(status, 0) for status in ItemStatus.values},
        "parse_failures": rc.items.filter(parse_failures__gt=0).count(),
        "disagreements": rc.items.filter(disagreement=True).count(),
        "overrides": rc.items.filter(override_score__isnull=False).count(),
        "regenerated": rc.items.filter(regenerations__gt=0).count(),
        "calls": campaign.calls_made,
        "tokens": campaign.tokens_in + campaign.tokens_out,
        "cost": campaign.cost,
        "last_error": rc.last_error,
    }


def run_list(rc: ReasoningCampaign) -> QuerySet[ReasoningRun]:
    return rc.runs.annotate(
        item_count=Count("items"),
        unscored_count=Count(
            "items", filter=Q(items__status__in=[ItemStatus.FILTERED, ItemStatus.ERROR])
        ),
    ).order_by("number")


def matrix(rc: ReasoningCampaign, *, run_number: int | None = None) -> dict:
    """Mean score per reasoning type x difficulty (overrides included), over every run or one.

    ``z[t][d]`` is None for a cell without scored items; ``counts`` holds the scored items,
    ``unscored`` the items left without a score (filtered, or given up on), which no mean
    counts."""
    s = settings_of(rc)
    items = rc.items.exclude(status__in=[ItemStatus.GENERATED, ItemStatus.ANSWERED])
    if run_number is not None:
        items = items.filter(run__number=run_number)
    sums: dict[tuple[str, int], list[float]] = {}
    left: dict[tuple[str, int], int] = {}
    for item in items.only(
        "reasoning_type", "difficulty", "judge_score", "override_score", "status"
    ):
        cell = (item.reasoning_type, item.difficulty)
        if item.score is None:
            left[cell] = left.get(cell, 0) + 1
            sums.setdefault(cell, [])
        else:
            sums.setdefault(cell, []).append(item.score)
    types = list(s.type_names)
    for name, _ in sums:
        if name not in types:
            types.append(name)  # a type removed from the settings after it ran
    difficulties = s.difficulties
    z, counts, unscored = [], [], []
    for name in types:
        row, row_counts, row_left = [], [], []
        for d in difficulties:
            values = sums.get((name, d), [])
            row.append(round(sum(values) / len(values), 4) if values else None)
            row_counts.append(len(values))
            row_left.append(left.get((name, d), 0))
        z.append(row)
        counts.append(row_counts)
        unscored.append(row_left)
    return {
        "types": types,
        "difficulties": difficulties,
        "z": z,
        "counts": counts,
        "unscored": unscored,
    }


def ema_series(rc: ReasoningCampaign) -> dict:
    """The state after every finished run: overall, per type and per difficulty EMA."""
    runs = list(rc.runs.filter(status="completed").order_by("number"))
    s = settings_of(rc)
    types = s.type_names
    difficulties = [str(d) for d in s.difficulties]
    return {
        "runs": [r.number for r in runs],
        "run_scores": [r.score for r in runs],
        "overall": [r.ema_after for r in runs],
        "by_type": {t: [r.ema_by_type_after.get(t) for r in runs] for t in types},
        "by_difficulty": {
            d: [r.ema_by_difficulty_after.get(d) for r in runs] for d in difficulties
        },
    }


def item_list(
    rc: ReasoningCampaign,
    *,
    run_number: int | None = None,
    reasoning_type: str | None = None,
    difficulty: int | None = None,
    status: str | None = None,
    flagged: str | None = None,
) -> QuerySet[ReasoningItem]:
    qs = rc.items.select_related("run", "override_by").order_by("run__number", "position")
    if run_number is not None:
        qs = qs.filter(run__number=run_number)
    if reasoning_type:
        qs = qs.filter(reasoning_type=reasoning_type)
    if difficulty is not None:
        qs = qs.filter(difficulty=difficulty)
    if status:
        qs = qs.filter(status=status)
    if flagged == "parse_failure":
        qs = qs.filter(parse_failures__gt=0)
    elif flagged == "disagreement":
        qs = qs.filter(disagreement=True)
    elif flagged == "override":
        qs = qs.filter(override_score__isnull=False)
    elif flagged == "regenerated":
        qs = qs.filter(regenerations__gt=0)
    return qs


def item_get(*, item_id: int) -> ReasoningItem:
    return ReasoningItem.objects.select_related(
        "run", "reasoning__campaign", "similar_to__run", "override_by"
    ).get(pk=item_id)


def log_entries(rc: ReasoningCampaign) -> QuerySet[ResultLogEntry]:
    return rc.log.select_related("run").order_by("id")


# --------------------------------------------------------------------------- series


def series_list() -> QuerySet[ReasoningSeries]:
    return ReasoningSeries.objects.annotate(campaign_count=Count("campaigns")).order_by("name")


def series_get(*, slug: str) -> ReasoningSeries:
    """Raises ReasoningSeries.DoesNotExist."""
    return ReasoningSeries.objects.select_related("holder__campaign").get(slug=slug)


def series_state(series: ReasoningSeries) -> dict:
    """The series' state: the document's state.json, where it was saved and who holds it."""
    holder = series.holder.campaign if series.holder_id else None
    return {
        "name": series.name,
        "slug": series.slug,
        "ema": series.ema,
        "run_count": series.run_count,
        "current_difficulty": series.current_difficulty,
        "ema_by_reasoning_type": series.ema_by_reasoning_type,
        "ema_by_difficulty": series.ema_by_difficulty,
        "saved_at": series.state_saved_at.isoformat() if series.state_saved_at else None,
        "imported_state": series.base_state or None,
        "imported_examples": series.imported.count(),
        "holder": (
            {"id": holder.pk, "name": holder.name, "state": holder.state} if holder else None
        ),
    }


def series_campaigns(series: ReasoningSeries) -> list[dict]:
    """The series' campaigns in the order they took it: each with its runs and the overall EMA
    it started from and left (the EMA history over campaigns)."""
    rows = []
    campaigns = series.campaigns.select_related("campaign").annotate(
        runs_made=Count("runs", filter=Q(runs__status=RunStatus.COMPLETED)),
        items_made=Count("items"),
    )
    for rc in campaigns:
        numbers = sorted(rc.runs.values_list("number", flat=True))
        rows.append(
            {
                "id": rc.pk,
                "name": rc.campaign.name,
                "state": rc.campaign.state,
                "created_at": rc.campaign.created_at,
                "runs": numbers,
                "runs_done": rc.runs_made,
                "items": rc.items_made,
                "ema_start": rc.series_start.get("ema") if rc.series_start else None,
                "run_count_start": rc.series_start.get("run_count") if rc.series_start else None,
                "ema_end": rc.ema if numbers else None,
                "started": bool(rc.series_start),
            }
        )
    rows.sort(key=lambda r: (min(r["runs"]) if r["runs"] else 10**9, r["created_at"]))
    return rows


def series_runs(series: ReasoningSeries) -> QuerySet[ReasoningRun]:
    """Every run of the series, across its campaigns, in number order."""
    return (
        series.runs.select_related("reasoning__campaign")
        .annotate(item_count=Count("items"))
        .order_by("number")
    )


def series_ema(series: ReasoningSeries) -> dict:
    """The series' EMAs after every finished run of every campaign (the chart across
    campaigns): the run numbers, which campaign made each, and the imported start if any."""
    runs = list(
        series.runs.filter(status=RunStatus.COMPLETED)
        .select_related("reasoning__campaign")
        .order_by("number")
    )
    types: list[str] = []
    for run in runs:
        for name in run.ema_by_type_after:
            if name not in types:
                types.append(name)
    return {
        "runs": [r.number for r in runs],
        "campaigns": [r.reasoning.campaign.name for r in runs],
        "run_scores": [r.score for r in runs],
        "overall": [r.ema_after for r in runs],
        "by_type": {t: [r.ema_by_type_after.get(t) for r in runs] for t in types},
        "imported": series.base_state or None,
    }


def series_log(series: ReasoningSeries) -> QuerySet[ResultLogEntry]:
    """The result log of every campaign of the series, in the order it was written."""
    return ResultLogEntry.objects.filter(reasoning__series=series).select_related("run")


def series_imported(series: ReasoningSeries) -> QuerySet[ImportedExample]:
    return series.imported.order_by("id")
