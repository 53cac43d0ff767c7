"""Stage ``filter``: the coarse filter keeps the candidates that are open-ended."""

from __future__ import annotations

from evolution.llm import fanout
from evolution.streams.kinds import unit_transition

from ..models import CandidateDecision, CandidateStage, FrontierCandidate
from .common import (
    KIND_NAME,
    Action,
    Ctx,
    candidate_key,
    coarse_filter_verdict,
    decide_candidate,
    fan_out_calls,
    raise_first,
    round_candidates,
)


def _filter(ctx: Ctx, action: Action) -> None:
    """The action's candidate and the round's next proposed ones, their filter calls side by
    side; each verdict is stored for its own candidate."""
    first = FrontierCandidate.objects.get(pk=action.candidate_id)
    rest = (
        round_candidates(ctx)
        .filter(stage=CandidateStage.PROPOSED, decision="")
        .exclude(pk=first.pk)
        .order_by("index")
    )
    batch = [first, *rest[: fanout.step_calls(ctx.mutator_width()) - 1]]
    outcomes = fan_out_calls(
        [lambda c=c: coarse_filter_verdict(ctx, c.statement, candidate_key(c)) for c in batch],
        ctx.mutator_width(),
    )
    for c, outcome in zip(batch, outcomes, strict=True):
        if not isinstance(outcome, BaseException):
            _store(c, *outcome)
    raise_first(outcomes)


def _store(c: FrontierCandidate, accepted: bool | None, verdict: dict) -> None:
    if accepted:
        unit_transition(
            KIND_NAME,
            FrontierCandidate.objects.filter(pk=c.pk),
            source=CandidateStage.PROPOSED,
            target=CandidateStage.FILTERED,
            filter_passed=True,
            filter_verdict=verdict,
        )
        return
    FrontierCandidate.objects.filter(pk=c.pk).update(filter_passed=False, filter_verdict=verdict)
    failed = [k for k in ("objective", "strategies", "scoring") if verdict.get(k) is False]
    reason = (
        f"coarse filter: no {', no '.join(failed)}. {verdict.get('reason', '')}"
        if failed
        else f"coarse filter answer unusable: {verdict.get('error', '')}"
    )
    decide_candidate(c.pk, CandidateDecision.FILTERED_OUT, reason.strip())
