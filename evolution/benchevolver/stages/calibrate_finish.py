"""BenchEvolver's ``calibrate_finish`` stage: the seed's level is set from its judged attempts,
and a seed without a reference may adopt a passing attempt as its reference."""

from __future__ import annotations

from django.db import transaction

from evolution.benchevolver.models import LineageState, SolverAttempt
from evolution.judging import difficulty
from evolution.models import Problem

from .calibration import leave_pending
from .common import Action, Ctx


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
    leave_pending(ctx, target, **updates)
