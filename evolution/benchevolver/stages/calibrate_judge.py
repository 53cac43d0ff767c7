"""BenchEvolver's ``calibrate_judge`` stage: the seed's calibration answers are judged on the
seed's own tests in the sandbox."""

from __future__ import annotations

from evolution.benchevolver.models import SolverAttempt
from evolution.judging.attempts import judge_attempts
from evolution.models import Problem

from .common import Action, Ctx


def _seed_tests(problem: Problem) -> list[tuple[str, str]]:
    return [(t.input, t.output) for t in problem.tests.order_by("tier", "ordinal")]


def act_calibrate_judge(ctx: Ctx, action: Action) -> None:
    seed = ctx.seed
    pending = list(
        SolverAttempt.objects.filter(lineage=ctx.lineage, candidate__isnull=True, verdict="")
    )
    judge_attempts(
        pending,
        tests=_seed_tests(seed),
        harness=seed.harness,
        entry_point=seed.entry_point,
        limits=ctx.limits(seed.time_limit_s),
        comparison=seed.comparison,
    )
