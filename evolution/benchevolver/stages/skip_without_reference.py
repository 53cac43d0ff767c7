"""BenchEvolver's ``skip_without_reference`` stage: a seed with no reference solution and no
passing calibration attempt cannot be evolved (the method mutates the reference), so its
lineage ends with the reason."""

from __future__ import annotations

from evolution.models.campaigns import LineageState

from .calibration import leave_pending, no_reference_reason
from .common import Action, Ctx


def act_skip_without_reference(ctx: Ctx, action: Action) -> None:
    """Skipped before any model is called: nothing could ever give this seed a reference."""
    leave_pending(ctx, LineageState.SKIPPED, stop_reason=no_reference_reason(ctx)[:300])
