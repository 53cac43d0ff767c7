"""BenchEvolver's declared graph (paper 000, Algorithm 1).

Streams are lineages (one per seed, advanced concurrently); units are candidates, which move
forward stage by stage and may be decided (accepted or rejected) at any stage. Model-bound
stages run on the ``default`` queue, execution-bound ones on ``sandbox``. Giving up on an item
decides the candidate as ``error``; a lineage whose own step (calibration, proposing) keeps
failing is failed, never the campaign.
"""

from __future__ import annotations

from django.db.models import Q

from evolution.models import Campaign, Candidate, Lineage
from evolution.models.campaigns import Decision, LineageState, Stage
from evolution.pipeline.config import EvolutionSettings
from evolution.services import steps
from evolution.services.campaigns import ACTIVE_LINEAGE_STATES
from evolution.streams.kinds import ANY, DEFAULT, GIVE_UP_REASON, NEW, SANDBOX, Kind, register
from evolution.streams.kinds import Stage as StreamStage

ORDER = [
    Stage.PROPOSED,
    Stage.GENERATED,
    Stage.MATERIALIZED,
    Stage.VALIDATED,
    Stage.MEASURED,
    Stage.JUDGED,
    Stage.DECIDED,
]


def load(lineage_id: int) -> steps.Ctx:
    lineage = Lineage.objects.select_related("campaign", "seed", "parent").get(pk=lineage_id)
    return steps.Ctx(
        campaign=lineage.campaign,
        lineage=lineage,
        settings=EvolutionSettings.from_dict(lineage.campaign.settings),
    )


def next_action(ctx: steps.Ctx):
    if ctx.lineage.state not in ACTIVE_LINEAGE_STATES:
        return None
    return steps.next_action(ctx)


def give_up(ctx: steps.Ctx, action, reason: str) -> bool:
    """Decide the candidate the failing action worked on as an error (the lineage goes on)."""
    if not action.candidate_id:
        return False
    cand = Candidate.objects.get(pk=action.candidate_id)
    steps._decide(ctx, cand, Decision.ERROR, reason)
    return True


def fail_lineage(lineage_id: int, reason: str) -> None:
    Lineage.objects.filter(pk=lineage_id).update(state=LineageState.FAILED, stop_reason=reason)


def finished(campaign: Campaign) -> bool:
    return not Lineage.objects.filter(
        campaign_id=campaign.pk, state__in=ACTIVE_LINEAGE_STATES
    ).exists()


A = steps.ACTIONS

KIND = register(
    Kind(
        name="benchevolver",
        label="BenchEvolver",
        stream_model=Lineage,
        active_streams=Q(state__in=ACTIVE_LINEAGE_STATES),
        unit_model=Candidate,
        unit_state_field="stage",
        states=tuple(ORDER),
        # Forward one stage at a time; a decision (accepted, rejected, error) from any stage.
        edges=(
            (NEW, Stage.PROPOSED),
            *zip(ORDER[:-2], ORDER[1:-1], strict=True),
            *((s, Stage.DECIDED) for s in ORDER[:-1]),
        ),
        stages=(
            StreamStage("calibrate_solve", A["calibrate_solve"], DEFAULT),
            StreamStage("calibrate_judge", A["calibrate_judge"], SANDBOX),
            StreamStage("calibrate_finish", A["calibrate_finish"], ANY),
            StreamStage("skip_scored_seed", A["skip_scored_seed"], ANY),
            StreamStage("skip_without_reference", A["skip_without_reference"], ANY),
            StreamStage("propose", A["propose"], DEFAULT),
            StreamStage("write_tests", A["write_tests"], DEFAULT),
            StreamStage("materialize", A["materialize"], SANDBOX),
            StreamStage("validate_witnesses", A["validate_witnesses"], DEFAULT),
            StreamStage("validate_execute", A["validate_execute"], SANDBOX),
            StreamStage("repair", A["repair"], DEFAULT),
            StreamStage("faithfulness_solve", A["faithfulness_solve"], DEFAULT),
            StreamStage("faithfulness_execute", A["faithfulness_execute"], SANDBOX),
            StreamStage("measure_solve", A["measure_solve"], DEFAULT),
            StreamStage("measure_judge", A["measure_judge"], SANDBOX),
            StreamStage("judge", A["judge"], DEFAULT),
            StreamStage("decide", A["decide"], ANY),
        ),
        load=load,
        next_action=next_action,
        give_up=give_up,
        unit_of=lambda action: action.candidate_id,
        given_up=Q(decision=Decision.ERROR, decision_reason__regex=GIVE_UP_REASON),
        fail_stream=fail_lineage,
        finished=finished,
        sequential=False,
        completed_reason="every lineage finished",
    )
)
