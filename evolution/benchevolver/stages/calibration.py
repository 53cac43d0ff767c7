"""What the seed-calibration stages share (``calibrate_solve``, ``calibrate_judge``,
``calibrate_finish``, and the two skips decided before them, ``skip_scored_seed`` and
``skip_without_reference``, each in its own module): why a seed cannot be evolved, and leaving a
lineage pending. The panel solves the seed, its level is measured, and a seed without a
reference may adopt a passing attempt."""

from __future__ import annotations

from evolution.benchevolver.models import Lineage, LineageState
from evolution.streams.kinds import unit_transition

from .common import KIND_NAME, Ctx


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


def leave_pending(ctx: Ctx, target: str, **fields) -> None:
    """The lineage leaves calibration (to evolve, or skipped) along its declared edge."""
    unit_transition(
        KIND_NAME,
        Lineage.objects.filter(pk=ctx.lineage.pk),
        source=LineageState.PENDING,
        target=target,
        **fields,
    )
