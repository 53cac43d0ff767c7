"""BenchEvolver's ``decide`` stage: the judge's report decides the candidate (an unparsable
report is an error; a near-duplicate reskin, false difficulty or no algorithmic lift over the
parent rejects it; otherwise it is accepted), recorded once by ``accept.decide_candidate``."""

from __future__ import annotations

from evolution.benchevolver.models import Decision

from .accept import decide_candidate
from .common import (
    Action,
    Ctx,
    action_candidate,
)


def act_decide(ctx: Ctx, action: Action) -> None:
    cand = action_candidate(action)
    model = cand.judge_report.get("model", {})
    reasons = "; ".join(model.get("reasons", []))
    if not model.get("parsed", False):
        decision, reason = Decision.ERROR, f"judge answer unparsable: {reasons}"
    elif model.get("duplicate"):
        decision, reason = Decision.DUPLICATE, f"judge: near-duplicate reskin — {reasons}"
    elif model.get("artificial"):
        decision, reason = Decision.JUDGE_REJECTED, f"judge: false difficulty — {reasons}"
    elif model.get("lift") is False:
        decision = Decision.JUDGE_REJECTED
        reason = f"judge: no algorithmic lift over the parent — {reasons}"
    else:
        decision, reason = Decision.ACCEPTED, cand.judge_report.get("acceptance", "accepted")
    decide_candidate(ctx, cand, decision, reason)
