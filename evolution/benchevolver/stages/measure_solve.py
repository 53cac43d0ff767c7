"""BenchEvolver's ``measure_solve`` stage: every panel model answers the candidate K times, each
answer stored as it arrives."""

from __future__ import annotations

from .common import (
    Action,
    Ctx,
    action_candidate,
    candidate_starter,
)
from .difficulty import solve_attempts


def act_measure_solve(ctx: Ctx, action: Action) -> None:
    cand = action_candidate(action)
    solve_attempts(
        ctx,
        candidate=cand,
        statement=cand.statement,
        harness=cand.harness,
        entry_point=cand.entry_point,
        starter_code=candidate_starter(ctx, cand),
    )
