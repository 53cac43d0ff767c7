"""Stage ``start_run``: a run is opened with its plan of cells (type x difficulty; pure logic in
``engine/plan.py``)."""

from __future__ import annotations

from django.db import transaction

from ..engine import plan
from ..models import ReasoningCampaign, ReasoningRun, RunStatus
from .common import Action, Ctx, _log


def _start_run(ctx: Ctx, action: Action) -> None:
    with transaction.atomic():
        rc = ReasoningCampaign.objects.select_for_update().get(pk=ctx.rc.pk)
        if rc.runs.filter(status=RunStatus.RUNNING).exists():
            return
        run_plan = plan.run_plan(
            type_names=ctx.settings.type_names,
            num_questions=ctx.settings.num_questions,
            ema_by_type=rc.ema_by_reasoning_type,
            weak_area_focus=ctx.settings.weak_area_focus,
            weak_area_types=ctx.settings.weak_area_types,
            weak_area_extra=ctx.settings.weak_area_extra,
        )
        run = ReasoningRun.objects.create(reasoning=rc, number=rc.run_count + 1, plan=run_plan)
        rc.current_difficulty = ctx.settings.difficulty_start
        rc.save(update_fields=["current_difficulty", "updated_at"])
        _log(rc.pk, "run_started", {"run": run.number, "plan": run_plan}, run=run)
