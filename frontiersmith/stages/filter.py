"""Stage ``filter``: the coarse filter keeps the candidates that are open-ended."""

from __future__ import annotations

from evolution.streams.kinds import unit_transition

from ..models import CandidateDecision, CandidateStage, FrontierCandidate
from .common import KIND_NAME, Action, Ctx, _decide, _filter_verdict, _key


def _filter(ctx: Ctx, action: Action) -> None:
    c = FrontierCandidate.objects.get(pk=action.candidate_id)
    accepted, verdict = _filter_verdict(ctx, c.statement, _key(c))
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
    _decide(c.pk, CandidateDecision.FILTERED_OUT, reason.strip())
