"""Seed calibration (stages ``calibrate_solve``, ``calibrate_judge``, ``calibrate_finish``) and the
two skips decided before it (``skip_scored_seed``, ``skip_without_reference``): the panel solves
the seed, its level is measured, and a seed without a reference may adopt a passing attempt."""

from __future__ import annotations

from django.db import transaction

from evolution.judging import difficulty
from evolution.judging.attempts import judge_attempts
from evolution.models import Lineage, Problem, SolverAttempt
from evolution.models.campaigns import LineageState
from evolution.streams.kinds import unit_transition

from .common import KIND_NAME, Action, Ctx
from .difficulty import solve_attempts


def no_reference_reason(ctx: Ctx) -> str:
    """Why the seed can never get a reference solution in this campaign ("" when it can): it
    has none, and either calibration may not supply one or there are no tests to prove it."""
    seed = ctx.seed
    if seed.reference_solution.strip():
        return ""
    if not ctx.settings.reference_from_calibration:
        return (
            "the seed has no reference solution and reference_from_calibration is off "
            "(give one in a solutions file at import)"
        )
    if not seed.tests.exists():
        return (
            "the seed has no reference solution and no tests a calibration attempt could "
            "pass to become one"
        )
    return ""


def _leave_pending(ctx: Ctx, target: str, **fields) -> None:
    """The lineage leaves calibration (to evolve, or skipped) along its declared edge."""
    unit_transition(
        KIND_NAME,
        Lineage.objects.filter(pk=ctx.lineage.pk),
        source=LineageState.PENDING,
        target=target,
        **fields,
    )


def _seed_tests(problem: Problem) -> list[tuple[str, str]]:
    return [(t.input, t.output) for t in problem.tests.order_by("tier", "ordinal")]


def act_calibrate_solve(ctx: Ctx, action: Action) -> None:
    seed = ctx.seed
    solve_attempts(
        ctx,
        candidate=None,
        statement=seed.statement,
        harness=seed.harness,
        entry_point=seed.entry_point,
        starter_code=seed.starter_code,
    )


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


def act_skip_scored_seed(ctx: Ctx, action: Action) -> None:
    """Open-ended (scored) problems have no pass/fail tests to calibrate or evolve against."""
    _leave_pending(
        ctx,
        LineageState.SKIPPED,
        stop_reason="open-ended seed (scored by a verifier): BenchEvolver needs pass/fail tests",
    )


def act_skip_without_reference(ctx: Ctx, action: Action) -> None:
    """Skipped before any model is called: nothing could ever give this seed a reference."""
    _leave_pending(ctx, LineageState.SKIPPED, stop_reason=no_reference_reason(ctx)[:300])


def _adopt_calibration_reference(ctx: Ctx, attempts: list[SolverAttempt]) -> bool:
    """Give a seed without a reference the first calibration attempt that passed every public
    and private test (a calibration attempt is judged on all of the seed's tests), with its
    provenance. Returns whether the seed now has a reference."""
    seed = ctx.seed
    if seed.reference_solution.strip():
        return True
    if not ctx.settings.reference_from_calibration:
        return False
    passed = sorted(
        (a for a in attempts if a.verdict == "AC" and a.code.strip()),
        key=lambda a: (a.endpoint.name, a.attempt_index),
    )
    if not passed:
        return False
    chosen = passed[0]
    provenance = {
        "source": "calibration",
        "campaign": ctx.campaign.pk,
        "lineage": ctx.lineage.pk,
        "endpoint": chosen.endpoint.name,
        "model": chosen.endpoint.model,
        "attempt": chosen.attempt_index,
        "solver_attempt": chosen.pk,
        "tests_passed": f"{chosen.passed_tests}/{chosen.total_tests}",
    }
    # Conditional: a reference given meanwhile (another campaign, a solutions file) is kept.
    # Once adopted, a re-import keeps it too unless told to replace references
    # (evolution/importers/references.py).
    with transaction.atomic():
        locked = Problem.objects.select_for_update().get(pk=seed.pk)
        if not locked.reference_solution.strip():
            locked.reference_solution = chosen.code
            locked.reference_provenance = provenance
            locked.save(update_fields=["reference_solution", "reference_provenance", "updated_at"])
    seed.refresh_from_db()
    return bool(seed.reference_solution.strip())


def act_calibrate_finish(ctx: Ctx, action: Action) -> None:
    attempts = list(
        SolverAttempt.objects.filter(lineage=ctx.lineage, candidate__isnull=True).select_related(
            "endpoint"
        )
    )
    has_reference = _adopt_calibration_reference(ctx, attempts)
    panel = difficulty.pool([(a.endpoint.name, a.verdict) for a in attempts])
    level = ctx.settings.level(panel.pass_rate)
    updates = {
        "seed_passes": panel.passes,
        "seed_attempts": panel.attempts,
        "seed_level": level,
        "parent_level": level,
        "best_level": level,
        "parent": ctx.seed,
    }
    target = LineageState.EVOLVING
    if level not in ctx.settings.allowed_seed_levels:
        target = LineageState.SKIPPED
        updates.update(
            stop_reason=f"seed level {level} (pass rate {panel.pass_rate:.2f}) is outside allowed_seed_levels "
            f"{ctx.settings.allowed_seed_levels}",
        )
    elif not has_reference:
        target = LineageState.SKIPPED
        updates.update(
            stop_reason="the seed has no reference solution and no calibration attempt passed "
            "every public and private test",
        )
    _leave_pending(ctx, target, **updates)
