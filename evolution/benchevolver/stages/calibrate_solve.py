"""BenchEvolver's ``calibrate_solve`` stage: every panel model answers the seed K times, each
answer stored as it arrives (the seed's calibration, Algorithm 1's starting level)."""

from __future__ import annotations

from .common import Action, Ctx
from .difficulty import solve_attempts


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
