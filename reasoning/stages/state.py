"""The run state of section 6.1, kept per series (the document's state.json) and mirrored on the
campaign writing it; what the stages share to read, save and hand it on.

Lock order, everywhere: the series row, then the campaign row, then the run. A save point writes
the series and the campaign in one transaction; a second campaign of the series cannot start a
run while the series' holder is queued, running or paused (``holder_conflict``)."""

from __future__ import annotations

from django.db.models import Max
from django.utils import timezone

from evolution.models import Campaign
from evolution.models.campaigns import CampaignState

from ..engine import ema as ema_engine
from ..models import ImportedExample, ReasoningCampaign, ReasoningRun, ReasoningSeries, RunStatus

# A holder in one of these states still writes the series; any other state lets it go.
HOLDING_STATES = (CampaignState.QUEUED, CampaignState.RUNNING, CampaignState.PAUSED)
STATE_FIELDS = (
    "ema",
    "run_count",
    "current_difficulty",
    "ema_by_reasoning_type",
    "ema_by_difficulty",
)


def state_of(row: ReasoningSeries | ReasoningCampaign) -> ema_engine.RunState:
    return ema_engine.RunState(
        ema=row.ema,
        run_count=row.run_count,
        current_difficulty=row.current_difficulty,
        ema_by_reasoning_type=dict(row.ema_by_reasoning_type),
        ema_by_difficulty=dict(row.ema_by_difficulty),
    )


def _assign(row, state: ema_engine.RunState, now) -> None:
    row.ema = state.ema
    row.run_count = state.run_count
    row.current_difficulty = state.current_difficulty
    row.ema_by_reasoning_type = dict(state.ema_by_reasoning_type)
    row.ema_by_difficulty = dict(state.ema_by_difficulty)
    row.state_saved_at = now


def state_store(
    rc: ReasoningCampaign, state: ema_engine.RunState, series: ReasoningSeries | None = None
) -> None:
    """Save point: the state on the campaign and, when given, on its series (the caller holds
    both rows, series first, in one transaction)."""
    now = timezone.now()
    _assign(rc, state, now)
    rc.save(update_fields=[*STATE_FIELDS, "state_saved_at", "updated_at"])
    if series is not None:
        _assign(series, state, now)
        series.save(update_fields=[*STATE_FIELDS, "state_saved_at"])


def lock(rc_id: int) -> tuple[ReasoningSeries, ReasoningCampaign]:
    """The campaign's series and the campaign, locked in that order (inside a transaction)."""
    series_id = ReasoningCampaign.objects.values_list("series_id", flat=True).get(pk=rc_id)
    series = ReasoningSeries.objects.select_for_update().get(pk=series_id)
    rc = ReasoningCampaign.objects.select_for_update().select_related("campaign").get(pk=rc_id)
    return series, rc


def next_run_number(series: ReasoningSeries) -> int:
    """Run numbers continue across the series: after its every run (a run a cancelled campaign
    left unfinished keeps its number), its completed runs and any imported run."""
    made = ReasoningRun.objects.filter(series=series).aggregate(n=Max("number"))["n"] or 0
    imported = ImportedExample.objects.filter(series=series).aggregate(n=Max("run_number"))["n"]
    return max(made, series.run_count, imported or 0) + 1


def holder_conflict(series: ReasoningSeries, rc: ReasoningCampaign) -> Campaign | None:
    """The other campaign still writing ``series`` (queued, running or paused), if any."""
    if series.holder_id is None or series.holder_id == rc.pk:
        return None
    other = Campaign.objects.filter(pk=series.holder_id).first()
    if other is None or other.state not in HOLDING_STATES:
        return None
    return other


def conflict_reason(series: ReasoningSeries, other: Campaign) -> str:
    return (
        f"series {series.name!r} is being continued by campaign {other.name!r} "
        f"(#{other.pk}, {other.state}): one campaign of a series runs at a time; resume this "
        "one when that one has finished or was cancelled"
    )[:300]


def runs_done(rc: ReasoningCampaign) -> int:
    """This campaign's own finished runs (``run_count`` is the series' count)."""
    return rc.runs.filter(status=RunStatus.COMPLETED).count()
