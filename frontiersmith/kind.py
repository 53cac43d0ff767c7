"""FrontierSmith's declared graph (paper 003): rounds of mutate, filter, judge, build, select.

One stream per campaign (``FrontierCampaign``): each round's selection needs every candidate of
the round, and the next round's pool comes from the accepted ones. Units are candidates:
proposed, filtered, judged, kept for building, executed, done (with a decision). A candidate a
step keeps failing on is decided ``unparsable`` with the reason; a calibration probe or a seed
formulation that keeps failing is recorded as an error and the campaign goes on.
"""

from __future__ import annotations

from django.db.models import Q

from evolution.models import Campaign, ProblemSet
from evolution.streams.kinds import (
    GIVE_UP_REASON,
    NEW,
    Kind,
    recorded_problems,
    register,
    stages_of,
)

from .config import FrontierSettings
from .engine import divergence
from .models import (
    CandidateDecision,
    CandidateStage,
    FilterProbe,
    FrontierCampaign,
    FrontierCandidate,
    SeedFormulation,
)
from .stages import (
    build,
    calibrate,
    extract,
    filter,
    judged,
    mutate,
    pair,
    sample,
    select_div,
    select_final,
    start_round,
)
from .stages.common import Action, Ctx, decide_candidate, load_context, probes_waiting, proposal_of

C = CandidateStage
ORDER = (C.PROPOSED, C.FILTERED, C.JUDGED, C.BUILDING, C.EXECUTED, C.DONE)


def work_finished(fc: FrontierCampaign, settings: FrontierSettings) -> bool:
    return fc.current_round > settings.rounds


def action_for(ctx: Ctx) -> Action:
    """The next thing to do, from the rows alone (so a rerun after a crash picks up here)."""
    fc, s = ctx.fc, ctx.settings
    for label, pid in probes_waiting(fc)[:1]:
        return Action("calibrate", problem_id=pid, label=label)
    if work_finished(fc, s):
        return Action("finished")
    rnd = fc.rounds.filter(number=fc.current_round).first()
    if rnd is None:
        return Action("start_round")
    candidates = list(fc.candidates.filter(round=rnd.number).order_by("index"))
    if len(candidates) < s.budget_candidates:
        index = len(candidates)
        if {c.index for c in candidates} != set(range(index)):
            index = min(set(range(s.budget_candidates)) - {c.index for c in candidates})
        pid, _ = proposal_of(rnd.pool, index)
        if not fc.formulations.filter(problem_id=pid).exists():
            return Action("extract", problem_id=pid)
        return Action("mutate", index=index)
    pairs_needed = len(divergence.pairs(s.solutions_per_candidate))
    for c in candidates:
        if c.decision:
            continue
        if c.stage == CandidateStage.PROPOSED:
            return Action("filter", candidate_id=c.pk)
        if c.stage == CandidateStage.FILTERED:
            if len(c.solutions) < s.solutions_per_candidate:
                return Action("sample", candidate_id=c.pk)
            if len(c.pair_verdicts) < pairs_needed:
                return Action("pair", candidate_id=c.pk)
            return Action("judged", candidate_id=c.pk)
    if not rnd.div_selected:
        return Action("select_div")
    for c in candidates:
        if not c.decision and c.stage == CandidateStage.BUILDING:
            return Action("build", candidate_id=c.pk)
    return Action("select_final")


def next_action(ctx: Ctx):
    action = action_for(ctx)
    return None if action.name == "finished" else action


def give_up(ctx: Ctx, action: Action, reason: str) -> bool:
    if action.candidate_id:
        decide_candidate(action.candidate_id, CandidateDecision.UNPARSABLE, reason)
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
        mutate._candidate_create(
            load_context(ctx.fc.pk),
            action.index,
            decision=CandidateDecision.UNPARSABLE,
            reason=reason,
        )
        return True
    return False  # a round barrier: no item to give up on


def finished(campaign: Campaign) -> bool:
    fc = FrontierCampaign.objects.get(pk=campaign.pk)
    return work_finished(fc, FrontierSettings.from_dict(campaign.settings))


def seed_counts(campaign_ids: list[int]) -> dict[int, int]:
    """Each campaign's seeds: its seed pool holds the seeds copied at creation and every
    accepted problem (which its output set holds too), so the pool's problems that are not in
    the output set (two queries)."""
    sets = list(
        FrontierCampaign.objects.filter(pk__in=campaign_ids).values_list(
            "pk", "seed_pool_id", "output_set_id"
        )
    )
    members: dict[int, set[int]] = {}
    for problem_set, problem in ProblemSet.problems.through.objects.filter(
        problemset_id__in=[i for _, pool, output in sets for i in (pool, output)]
    ).values_list("problemset_id", "problem_id"):
        members.setdefault(problem_set, set()).add(problem)
    return {
        pk: len(members.get(pool, set()) - members.get(output, set())) for pk, pool, output in sets
    }


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
        stages=stages_of(
            calibrate,
            start_round,
            extract,
            mutate,
            filter,
            sample,
            pair,
            judged,
            select_div,
            build,
            select_final,
        ),
        load=load_context,
        next_action=next_action,
        give_up=give_up,
        unit_of=lambda action: action.candidate_id,
        given_up=Q(decision=CandidateDecision.UNPARSABLE, decision_reason__regex=GIVE_UP_REASON),
        finished=finished,
        completed_reason="all rounds finished",
        seeds=seed_counts,
        accepted_problems=recorded_problems,
    )
)
