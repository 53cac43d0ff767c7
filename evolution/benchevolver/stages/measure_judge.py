"""BenchEvolver's ``measure_judge`` stage: the panel's answers are judged on the hidden tests and
the candidate's level (pass@1 with its interval) is set."""

from __future__ import annotations

from evolution.benchevolver.models import CandidateStage
from evolution.judging import attempts, difficulty

from .common import (
    Action,
    Ctx,
    action_candidate,
    candidate_comparison,
    move_candidate,
)


def act_measure_judge(ctx: Ctx, action: Action) -> None:
    cand = action_candidate(action)
    pending = list(cand.solver_attempts.filter(verdict=""))
    tests = [(t["input"], t["output"]) for t in cand.tests if t["hidden"]] or [
        (t["input"], t["output"]) for t in cand.tests
    ]
    attempts.judge_attempts(
        pending,
        tests=tests,
        harness=cand.harness,
        entry_point=cand.entry_point,
        limits=ctx.limits(),
        comparison=candidate_comparison(cand),
    )
    answered = list(cand.solver_attempts.select_related("endpoint"))
    if any(a.verdict == "" for a in answered):
        return
    panel = difficulty.pool([(a.endpoint.name, a.verdict) for a in answered])
    cand.passes, cand.attempts = panel.passes, panel.attempts
    cand.level = ctx.settings.level(panel.pass_rate)
    cand.panel_results = panel.per_model
    cand.error_pattern = panel.error_pattern
    move_candidate(
        cand,
        CandidateStage.MEASURED,
        "passes",
        "attempts",
        "level",
        "panel_results",
        "error_pattern",
    )
