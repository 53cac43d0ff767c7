"""Stage ``judged``: a candidate's pairwise verdicts are summed into its model-judged divergence."""

from __future__ import annotations

from evolution.streams.kinds import unit_transition

from ..engine import divergence
from ..models import CandidateStage, FrontierCandidate
from .common import KIND_NAME, Action, Ctx


def _judged(ctx: Ctx, action: Action) -> None:
    c = FrontierCandidate.objects.get(pk=action.candidate_id)
    value = divergence.judged_divergence(c.pair_verdicts)
    unit_transition(
        KIND_NAME,
        FrontierCandidate.objects.filter(pk=c.pk),
        source=CandidateStage.FILTERED,
        target=CandidateStage.JUDGED,
        judged_divergence=value,
    )
