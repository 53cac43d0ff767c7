"""Stage ``close_level``: a difficulty level is closed; the scores update the EMA state of the
campaign's series (``engine/ema.py``; the series and the campaign are saved together,
``stages/state.py``), and the last level closes the run with its report (``engine/report.py``).
The campaign's last run gives the series back (``ReasoningSeries.holder``)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from ..config import ReasoningSettings
from ..engine import ema as ema_engine
from ..engine import plan, report
from ..models import ReasoningCampaign, ReasoningRun, RunStatus
from . import state as series_state
from .common import Action, Ctx, log_event


def item_scores(items) -> list[float]:
    return [i.score for i in items if i.score is not None]


def _close_level(ctx: Ctx, action: Action) -> None:
    """Save point: the level's EMA, the next difficulty (adaptive or not), and when the run is
    over the overall and per-type EMAs and the report; all in one transaction."""
    s = ctx.settings
    with transaction.atomic():
        series, rc = series_state.lock(ctx.rc.pk)
        run = ReasoningRun.objects.select_for_update().get(pk=ctx.run.pk)
        difficulty = rc.current_difficulty
        if any(level["difficulty"] == difficulty for level in run.levels):
            return  # closed by an earlier attempt whose commit we did not see
        items = list(run.items.filter(difficulty=difficulty))
        level_score = ema_engine.mean(item_scores(items))
        state = series_state.state_of(series)
        state.update_difficulty(difficulty, level_score, s.alpha)
        level_ema = state.ema_by_difficulty.get(str(difficulty))
        nxt = plan.next_difficulty(
            current=difficulty,
            end=s.difficulty_end,
            adaptive=s.adaptive_difficulty,
            level_emas=[level.get("ema") for level in run.levels] + [level_ema],
            mastery=s.adaptive_mastery,
            floor=s.adaptive_floor,
            patience=s.adaptive_patience,
        )
        level = {
            "difficulty": difficulty,
            "score": level_score,
            "ema": level_ema,
            "items": len(items),
            # Items without a score (filtered, or given up on): not in the level's mean.
            "unscored": sum(1 for i in items if i.score is None),
            "next": nxt.difficulty,
            "reason": nxt.reason,
        }
        run.levels = [*run.levels, level]
        if nxt.difficulty is not None:
            state.current_difficulty = nxt.difficulty
            run.save(update_fields=["levels"])
            series_state.state_store(rc, state, series)
            log_event(rc.pk, "level_completed", {"run": run.number, **level}, run=run)
            return
        run_items = list(run.items.all())
        run.score = ema_engine.mean(item_scores(run_items))
        run.type_scores = {
            entry["name"]: ema_engine.mean(
                item_scores(i for i in run_items if i.reasoning_type == entry["name"])
            )
            for entry in run.plan
        }
        state.finish_run(run.score, run.type_scores, s.alpha)
        state.current_difficulty = s.difficulty_start
        run.status = RunStatus.COMPLETED
        run.stop_reason = nxt.reason[:300]
        run.finished_at = timezone.now()
        _snapshot(run, state)
        series_state.state_store(rc, state, series)
        run.report = render_run_report(rc, run, s, run_count=state.run_count)
        run.save()
        if series.holder_id == rc.pk and series_state.runs_done(rc) >= s.runs:
            series.holder = None  # the campaign's last run: the next campaign may continue
            series.save(update_fields=["holder"])
        log_event(rc.pk, "level_completed", {"run": run.number, **level}, run=run)
        log_event(
            rc.pk,
            "run_finished",
            {
                "run": run.number,
                "score": run.score,
                "type_scores": run.type_scores,
                "ema": state.ema,
                "ema_by_reasoning_type": state.ema_by_reasoning_type,
                "ema_by_difficulty": state.ema_by_difficulty,
                "run_count": state.run_count,
            },
            run=run,
        )


def _snapshot(run: ReasoningRun, state: ema_engine.RunState) -> None:
    run.ema_after = state.ema
    run.ema_by_type_after = dict(state.ema_by_reasoning_type)
    run.ema_by_difficulty_after = dict(state.ema_by_difficulty)


def render_run_report(
    rc: ReasoningCampaign, run: ReasoningRun, s: ReasoningSettings, *, run_count: int | None = None
) -> str:
    """The run's Markdown report; ``run_count``: the series' completed runs after it (default:
    the run's number)."""
    items = run.items.order_by("position")
    data = report.ReportData(
        campaign=rc.campaign.name,
        run_number=run.number,
        started_at=run.started_at.isoformat(timespec="seconds"),
        finished_at=(run.finished_at or timezone.now()).isoformat(timespec="seconds"),
        alpha=s.alpha,
        run_score=run.score,
        ema=run.ema_after,
        run_count=run.number if run_count is None else run_count,
        next_difficulty=s.difficulty_start,
        series=rc.series.name if rc.series_id else "",
        type_names=[entry["name"] for entry in run.plan],
        type_scores=run.type_scores,
        ema_by_reasoning_type=run.ema_by_type_after,
        levels=run.levels,
        ema_by_difficulty=run.ema_by_difficulty_after,
        stop_reason=run.stop_reason,
        replayed=rc.campaign.replayed,
        items=[
            report.ReportItem(
                reasoning_type=i.reasoning_type,
                difficulty=i.difficulty,
                question_index=i.question_index,
                question=i.question,
                answer=i.answer,
                score=i.score,
                rationale=i.rationale or i.status_reason,
                created_at=i.created_at.isoformat(timespec="seconds"),
                status=i.status,
                parse_failures=i.parse_failures,
                disagreement=i.disagreement,
                overridden=i.is_overridden,
                similarity=i.similarity,
                regenerations=i.regenerations,
            )
            for i in items
        ],
    )
    return report.render(data)
