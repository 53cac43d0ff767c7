"""BenchEvolver's ``skip_scored_seed`` stage: an open-ended (scored) seed has no pass/fail tests
to calibrate or evolve against, so its lineage is skipped with the reason."""

from __future__ import annotations

from evolution.benchevolver.models import LineageState

from .calibration import leave_pending
from .common import Action, Ctx


def act_skip_scored_seed(ctx: Ctx, action: Action) -> None:
    """Open-ended (scored) problems have no pass/fail tests to calibrate or evolve against."""
    leave_pending(
        ctx,
        LineageState.SKIPPED,
        stop_reason="open-ended seed (scored by a verifier): BenchEvolver needs pass/fail tests",
    )
