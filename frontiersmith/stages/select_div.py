"""Stage ``select_div``: the round's top N_div candidates by model-judged divergence go on to the
build stage."""

from __future__ import annotations

from django.db import transaction

from evolution.streams.kinds import unit_transition

from ..engine import divergence
from ..models import CandidateDecision, CandidateStage, FrontierCandidate, FrontierRound
from .common import KIND_NAME, Action, Ctx, decide_candidate, round_candidates


@transaction.atomic
def _select_div(ctx: Ctx, action: Action) -> None:
    rnd = FrontierRound.objects.select_for_update().get(
        frontier=ctx.fc, number=ctx.fc.current_round
    )
    if rnd.div_selected:
        return
    judged = list(round_candidates(ctx).filter(stage=CandidateStage.JUDGED, decision=""))
    kept = divergence.top(judged, ctx.settings.n_div, key=lambda c: c.judged_divergence)
    kept_ids = {c.pk for c in kept}
    for c in judged:
        if c.pk in kept_ids:
            unit_transition(
                KIND_NAME,
                FrontierCandidate.objects.filter(pk=c.pk),
                source=CandidateStage.JUDGED,
                target=CandidateStage.BUILDING,
            )
        else:
            decide_candidate(
                c.pk,
                CandidateDecision.LOW_DIVERGENCE,
                f"model-judged divergence {c.judged_divergence} is outside the top "
                f"{ctx.settings.n_div} of the round",
            )
    rnd.div_selected = True
    rnd.save(update_fields=["div_selected"])
