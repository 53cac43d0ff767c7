"""Stage ``start_run``: a run is opened with its plan of cells (type x difficulty; pure logic in
``engine/plan.py``). The run continues its series: its number follows the series' last run, and
the plan (weak-area focus) reads the series' EMAs. The first run of a campaign takes the series
(``ReasoningSeries.holder``) and records the state it starts from; while another campaign of
the series still holds it, the campaign is paused with the reason instead."""

from __future__ import annotations

import contextlib

from django.db import transaction

from evolution.services.campaigns import TransitionError, campaign_pause

from ..engine import plan
from ..models import ReasoningRun, RunStatus
from . import state as series_state
from .common import Action, Ctx, log_event


def _start_run(ctx: Ctx, action: Action) -> None:
    with transaction.atomic():
        series, rc = series_state.lock(ctx.rc.pk)
        if rc.runs.filter(status=RunStatus.RUNNING).exists():
            return
        other = series_state.holder_conflict(series, rc)
        if other is not None:
            # Paused or cancelled meanwhile: nothing starts either way.
            with contextlib.suppress(TransitionError):
                campaign_pause(
                    campaign_id=rc.pk, reason=series_state.conflict_reason(series, other)
                )
            return
        start = series_state.state_of(series)
        if series.holder_id != rc.pk:
            series.holder = rc
            series.save(update_fields=["holder"])
        if not rc.series_start:
            rc.series_start = start.to_json()
        run_plan = plan.run_plan(
            type_names=ctx.settings.type_names,
            num_questions=ctx.settings.num_questions,
            ema_by_type=series.ema_by_reasoning_type,
            weak_area_focus=ctx.settings.weak_area_focus,
            weak_area_types=ctx.settings.weak_area_types,
            weak_area_extra=ctx.settings.weak_area_extra,
        )
        run = ReasoningRun.objects.create(
            reasoning=rc,
            series=series,
            number=series_state.next_run_number(series),
            plan=run_plan,
        )
        # The campaign's copy of the state is the series' from here on.
        start.current_difficulty = ctx.settings.difficulty_start
        series_state.state_store(rc, start, series)
        rc.save(update_fields=["series_start", "updated_at"])
        log_event(rc.pk, "run_started", {"run": run.number, "plan": run_plan}, run=run)
