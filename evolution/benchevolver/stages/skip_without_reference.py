"""BenchEvolver's ``skip_without_reference`` stage: a seed with no reference solution that
calibration cannot give one (``reference_from_calibration`` off, or no tests an attempt could
pass) cannot be evolved, since the method mutates the reference; its lineage is skipped with
the reason before any model is called."""

from __future__ import annotations

from evolution.benchevolver.models import LineageState

from .calibration import leave_pending, no_reference_reason
from .common import Action, Ctx


def act_skip_without_reference(ctx: Ctx, action: Action) -> None:
    """Skipped before any model is called: nothing could ever give this seed a reference."""
    leave_pending(ctx, LineageState.SKIPPED, stop_reason=no_reference_reason(ctx)[:300])
