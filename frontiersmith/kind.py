"""FrontierSmith's declared graph (paper 003): rounds of mutate, filter, judge, build, select.

One stream per campaign (``FrontierCampaign``): each round's selection needs every candidate of
the round, and the next round's pool comes from the accepted ones. Units are candidates:
proposed, filtered, judged, kept for building, executed, done (with a decision). A candidate a
step keeps failing on is decided ``unparsable`` with the reason; a calibration probe or a seed
formulation that keeps failing is recorded as an error and the campaign goes on.
"""

from __future__ import annotations

from django.db.models import Q

from evolution.models import Campaign
from evolution.streams.kinds import GIVE_UP_REASON, NEW, Kind, Stage, register

from . import services
from .config import FrontierSettings
from .models import (
    CandidateDecision,
    CandidateStage,
    FilterProbe,
    FrontierCampaign,
    FrontierCandidate,
    SeedFormulation,
)

C = CandidateStage
ORDER = (C.PROPOSED, C.FILTERED, C.JUDGED, C.BUILDING, C.EXECUTED, C.DONE)


def next_action(ctx: services.Ctx):
    action = services.next_action(ctx)
    return None if action.name == "finished" else action


def give_up(ctx: services.Ctx, action: services.Action, reason: str) -> bool:
    if action.candidate_id:
        services._decide(action.candidate_id, CandidateDecision.UNPARSABLE, reason)
        return True
    if action.name == "calibrate":
        FilterProbe.objects.get_or_create(
            frontier_id=ctx.fc.pk,
            problem_id=action.problem_id,
            label=action.label,
            defaults={"accepted": None, "verdict": {"error": reason}},
        )
        return True
    if action.name == "extract":
        SeedFormulation.objects.get_or_create(
            frontier_id=ctx.fc.pk, problem_id=action.problem_id, defaults={"error": reason}
        )
        return True
    if action.name == "mutate":
        services._candidate_create(
            services._load(ctx.fc.pk),
            action.index,
            decision=CandidateDecision.UNPARSABLE,
            reason=reason,
        )
        return True
    return False  # a round barrier: no item to give up on


def finished(campaign: Campaign) -> bool:
    fc = FrontierCampaign.objects.get(pk=campaign.pk)
    return services.work_finished(fc, FrontierSettings.from_dict(campaign.settings))


A = services.ACTIONS

KIND = register(
    Kind(
        name="frontiersmith",
        label="FrontierSmith",
        stream_model=FrontierCampaign,
        unit_model=FrontierCandidate,
        unit_state_field="stage",
        states=ORDER,
        edges=(
            (NEW, C.PROPOSED),
            (NEW, C.DONE),  # a mutation that could not be parsed is decided at once
            *zip(ORDER[:-1], ORDER[1:], strict=True),
            *((s, C.DONE) for s in ORDER[:-2]),  # rejected (or given up) on the way
        ),
        stages=(
            Stage("calibrate", A["calibrate"]),
            Stage("start_round", A["start_round"]),
            Stage("extract", A["extract"]),
            Stage("mutate", A["mutate"]),
            Stage("filter", A["filter"]),
            Stage("sample", A["sample"]),
            Stage("pair", A["pair"]),
            Stage("judged", A["judged"]),
            Stage("select_div", A["select_div"]),
            Stage("build", A["build"]),
            Stage("select_final", A["select_final"]),
        ),
        load=services._load,
        next_action=next_action,
        give_up=give_up,
        unit_of=lambda action: action.candidate_id,
        given_up=Q(decision=CandidateDecision.UNPARSABLE, decision_reason__regex=GIVE_UP_REASON),
        finished=finished,
        completed_reason="all rounds finished",
    )
)
