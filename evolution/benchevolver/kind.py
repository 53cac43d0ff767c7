"""BenchEvolver's declared graph (paper 000, Algorithm 1).

Streams are lineages (one per seed, advanced concurrently); units are candidates, which move
forward stage by stage, back when a repair or more panel evidence calls for it, and may be
decided (accepted or rejected) at any stage; every move is a declared edge
(``stages.common.move_candidate``). Model-bound
stages run on the ``default`` queue, execution-bound ones on ``sandbox``. Giving up on an item
decides the candidate as ``error``; a lineage whose own step (calibration, proposing) keeps
failing is failed, never the campaign.

Each stage's database side is ``stages/<module>.py`` (named as the pure logic it drives in
``engine/<module>.py``); ``action_for`` below is the one place that says which runs next.
"""

from __future__ import annotations

from collections import Counter

from django.db.models import Q

from evolution.benchevolver.models import (
    Candidate,
    CandidateStage,
    Decision,
    Lineage,
    LineageState,
    SolverAttempt,
)
from evolution.judging.difficulty import INFRA_ERROR
from evolution.models import Campaign
from evolution.streams.kinds import (
    ANY,
    DEFAULT,
    GIVE_UP_REASON,
    NEW,
    SANDBOX,
    Kind,
    Lineages,
    ReEvolver,
    Stage,
    count_by,
    register,
    unit_transition,
)

from . import facts, services
from .engine.config import EvolutionSettings
from .stages import (
    accept,
    calibrate_finish,
    calibrate_judge,
    calibrate_solve,
    calibration,
    decide,
    difficulty,
    faithfulness_execute,
    faithfulness_solve,
    judge,
    materialize,
    measure_judge,
    measure_solve,
    propose,
    repair,
    skip_scored_seed,
    skip_without_reference,
    validate_execute,
    validate_witnesses,
    write_tests,
)
from .stages.common import KIND_NAME, Action, Ctx, open_candidate

ACTIVE_LINEAGE_STATES = (LineageState.PENDING, LineageState.EVOLVING)

ORDER = [
    CandidateStage.PROPOSED,
    CandidateStage.GENERATED,
    CandidateStage.MATERIALIZED,
    CandidateStage.VALIDATED,
    CandidateStage.MEASURED,
    CandidateStage.JUDGED,
    CandidateStage.DECIDED,
]


def load(lineage_id: int) -> Ctx:
    lineage = Lineage.objects.select_related("campaign", "seed", "parent").get(pk=lineage_id)
    return Ctx(
        campaign=lineage.campaign,
        lineage=lineage,
        settings=EvolutionSettings.from_dict(lineage.campaign.settings),
    )


def next_action(ctx: Ctx):
    if ctx.lineage.state not in ACTIVE_LINEAGE_STATES:
        return None
    return action_for(ctx)


def action_for(ctx: Ctx) -> Action:
    """The action the lineage's rows call for (its state, then its open candidate's stage)."""
    lineage = ctx.lineage
    if lineage.state == LineageState.PENDING:
        if (ctx.seed.comparison or {}).get("mode") == "score":
            return Action("skip_scored_seed", ANY)
        if calibration.no_reference_reason(ctx):
            return Action("skip_without_reference", ANY)
        attempts = SolverAttempt.objects.filter(lineage=lineage, candidate__isnull=True)
        if attempts.exclude(verdict=INFRA_ERROR).count() < difficulty.planned_attempts(ctx):
            return Action("calibrate_solve", DEFAULT)
        if attempts.filter(verdict="").exists():
            return Action("calibrate_judge", SANDBOX)
        return Action("calibrate_finish", ANY)
    cand = open_candidate(lineage)
    if cand is None:
        return Action("propose", DEFAULT)
    c = cand.pk
    if cand.stage == CandidateStage.PROPOSED:
        return Action("write_tests", DEFAULT, c)
    if cand.stage == CandidateStage.GENERATED:
        return Action("materialize", SANDBOX, c)
    if cand.stage == CandidateStage.MATERIALIZED:
        gen = cand.generators
        if gen.get("pending_repair"):
            return Action("repair", DEFAULT, c)
        # Validation follows the lineage's Table 5 column: triangulation (LiveCodeBench) or
        # statement faithfulness (SciCode), whatever the harness.
        if ctx.triangulates:
            if "brute_force" not in gen or "oracle_outputs" not in gen:
                return Action("validate_witnesses", DEFAULT, c)
            return Action("validate_execute", SANDBOX, c)
        if "faithfulness" not in gen:
            return Action("faithfulness_solve", DEFAULT, c)
        return Action("faithfulness_execute", SANDBOX, c)
    if cand.stage == CandidateStage.VALIDATED:
        attempts = cand.solver_attempts.exclude(verdict=INFRA_ERROR)
        if attempts.count() < difficulty.planned_attempts(ctx, cand):
            return Action("measure_solve", DEFAULT, c)
        return Action("measure_judge", SANDBOX, c)
    if cand.stage == CandidateStage.MEASURED:
        return Action("judge", DEFAULT, c)
    return Action("decide", ANY, c)


def give_up(ctx: Ctx, action, reason: str) -> bool:
    """Decide the candidate the failing action worked on as an error (the lineage goes on)."""
    if not action.candidate_id:
        return False
    cand = Candidate.objects.get(pk=action.candidate_id)
    accept.decide_candidate(ctx, cand, Decision.ERROR, reason)
    return True


def fail_lineage(lineage_id: int, reason: str) -> None:
    unit_transition(
        KIND,
        Lineage.objects.filter(pk=lineage_id),
        source=ACTIVE_LINEAGE_STATES,
        target=LineageState.FAILED,
        stop_reason=reason,
    )


def finished(campaign: Campaign) -> bool:
    return not Lineage.objects.filter(
        campaign_id=campaign.pk, state__in=ACTIVE_LINEAGE_STATES
    ).exists()


def failure(campaign: Campaign) -> str | None:
    """A campaign whose every candidate ended in an error (the evolver refused every call, or
    its every answer was unusable) made nothing: it fails with the commonest reason rather than
    reading "every lineage finished". A campaign that made no candidate (every seed skipped by
    calibration) did what it was asked and completes."""
    candidates = Candidate.objects.filter(lineage__campaign_id=campaign.pk)
    total = candidates.count()
    if not total or candidates.exclude(decision=Decision.ERROR).exists():
        return None
    reasons = Counter(candidates.values_list("decision_reason", flat=True))
    reason, times = reasons.most_common(1)[0]
    return (
        f"every candidate ended in an error ({total} of {total}; {times} of them: {reason[:160]})"
    )


KIND = register(
    Kind(
        name=KIND_NAME,
        label="BenchEvolver",
        stream_model=Lineage,
        active_streams=Q(state__in=ACTIVE_LINEAGE_STATES),
        # A lineage calibrates its seed, then evolves until a stopping rule fires; a seed
        # outside the allowed levels (or without a reference) is skipped; a lineage whose own
        # step keeps failing is failed.
        stream_state_field="state",
        stream_states=tuple(LineageState.values),
        stream_edges=(
            (NEW, LineageState.PENDING),
            (LineageState.PENDING, LineageState.EVOLVING),
            (LineageState.PENDING, LineageState.SKIPPED),
            (LineageState.EVOLVING, LineageState.DONE),
            *((s, LineageState.FAILED) for s in ACTIVE_LINEAGE_STATES),
        ),
        unit_model=Candidate,
        unit_state_field="stage",
        states=tuple(ORDER),
        # Forward one stage at a time; back for a repair or more evidence; a decision
        # (accepted, rejected, error) from any stage. Stages move only through
        # ``stages.common.move_candidate``.
        edges=(
            (NEW, CandidateStage.PROPOSED),
            *zip(ORDER[:-2], ORDER[1:-1], strict=True),
            # The test generator failed or wrote invalid inputs: it is written again.
            (CandidateStage.GENERATED, CandidateStage.PROPOSED),
            # The reference was repaired: the tests are materialized again.
            (CandidateStage.MATERIALIZED, CandidateStage.GENERATED),
            # The statement was repaired: the test generator (and the input validator) are
            # written again from it, then the tests materialized again.
            (CandidateStage.MATERIALIZED, CandidateStage.PROPOSED),
            # The level's interval does not yet clear the bar: the panel attempts it again.
            (CandidateStage.MEASURED, CandidateStage.VALIDATED),
            *((s, CandidateStage.DECIDED) for s in ORDER[:-1]),
        ),
        stages=(
            Stage("calibrate_solve", calibrate_solve.act_calibrate_solve, DEFAULT),
            Stage("calibrate_judge", calibrate_judge.act_calibrate_judge, SANDBOX),
            Stage("calibrate_finish", calibrate_finish.act_calibrate_finish, ANY),
            Stage("skip_scored_seed", skip_scored_seed.act_skip_scored_seed, ANY),
            Stage("skip_without_reference", skip_without_reference.act_skip_without_reference, ANY),
            Stage("propose", propose.act_propose, DEFAULT),
            Stage("write_tests", write_tests.act_write_tests, DEFAULT),
            Stage("materialize", materialize.act_materialize, SANDBOX),
            Stage("validate_witnesses", validate_witnesses.act_validate_witnesses, DEFAULT),
            Stage("validate_execute", validate_execute.act_validate_execute, SANDBOX),
            Stage("repair", repair.act_repair, DEFAULT),
            Stage("faithfulness_solve", faithfulness_solve.act_faithfulness_solve, DEFAULT),
            Stage("faithfulness_execute", faithfulness_execute.act_faithfulness_execute, SANDBOX),
            Stage("measure_solve", measure_solve.act_measure_solve, DEFAULT),
            Stage("measure_judge", measure_judge.act_measure_judge, SANDBOX),
            Stage("judge", judge.act_judge, DEFAULT),
            Stage("decide", decide.act_decide, ANY),
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
        failure=failure,
        # One lineage per seed, made with the campaign.
        seeds=lambda ids: count_by(Lineage.objects.filter(campaign_id__in=ids), "campaign_id"),
        # The living loop re-evolves a benchmark's saturated problems with BenchEvolver.
        reevolver=ReEvolver(
            create=services.campaign_create,
            seeds_drop=services.seeds_drop,
            settings_table=lambda campaign: EvolutionSettings.table(campaign.settings),
        ),
        seed_problems=facts.seed_problems,
        panel_facts=facts.panel_facts,
        accepted_problems=facts.accepted_problems,
        # Review rounds may take a lineage as one group, as it grew.
        lineages=Lineages(
            model=Lineage._meta.label,
            reviewable=facts.reviewable_lineages,
            problems=facts.lineage_problems,
            label=facts.lineage_label,
        ),
        problem_tags=facts.problem_tags,
    )
)
