"""Stage ``select_final``: the round's top N_final converged candidates become Problems and join
the seed pool."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from evolution.models import Problem, TestCase
from evolution.models.problems import Harness, ProblemKind
from evolution.streams.kinds import unit_transition

from ..engine import divergence, formulation
from ..models import (
    CandidateDecision,
    CandidateStage,
    FrontierCampaign,
    FrontierCandidate,
    FrontierRound,
    SeedFormulation,
)
from ..selectors import round_funnel
from .common import KIND_NAME, METHOD, Action, Ctx, decide_candidate, round_candidates


@transaction.atomic
def _select_final(ctx: Ctx, action: Action) -> None:
    """Keep the top N_final by execution divergence; they become Problems and join the seed
    pool. The round closes and the next one starts from the grown pool."""
    fc = FrontierCampaign.objects.select_for_update().get(pk=ctx.fc.pk)
    rnd = FrontierRound.objects.select_for_update().get(frontier=fc, number=fc.current_round)
    if rnd.closed:
        return
    executed = []
    for c in round_candidates(ctx).filter(stage=CandidateStage.EXECUTED, decision=""):
        if c.execution_divergence is None:
            # Not measured (fewer than two scored solutions): refused, never ranked.
            decide_candidate(
                c.pk,
                CandidateDecision.UNMEASURED_DIVERGENCE,
                divergence.unmeasured_reason(len(c.score_matrix or []), len(c.solutions or [])),
            )
        else:
            executed.append(c)
    kept = divergence.top(executed, ctx.settings.n_final, key=lambda c: c.execution_divergence)
    kept_ids = {c.pk for c in kept}
    for c in executed:
        if c.pk in kept_ids:
            unit_transition(
                KIND_NAME,
                FrontierCandidate.objects.filter(pk=c.pk, decision=""),
                source=CandidateStage.EXECUTED,
                target=CandidateStage.DONE,
                accepted_problem=_accepted_problem(ctx, c),
                decision=CandidateDecision.ACCEPTED,
                decision_reason=(
                    f"execution divergence {divergence.describe(c.execution_divergence)} "
                    f"within the top {ctx.settings.n_final} of the round"
                ),
                updated_at=timezone.now(),
            )
        else:
            decide_candidate(
                c.pk,
                CandidateDecision.LOW_EXEC_DIVERGENCE,
                f"execution divergence {divergence.describe(c.execution_divergence)} "
                f"outside the top {ctx.settings.n_final} of the round",
            )
    rnd.funnel = round_funnel(fc=fc, number=rnd.number)
    rnd.closed = True
    rnd.closed_at = timezone.now()
    rnd.save(update_fields=["funnel", "closed", "closed_at"])
    fc.current_round = rnd.number + 1
    fc.save(update_fields=["current_round", "updated_at"])


def _accepted_problem(ctx: Ctx, c: FrontierCandidate) -> Problem:
    parent = c.parent
    root = parent.lineage_root or parent
    statement = c.statement.rstrip() + "\n\n" + formulation.scoring_rule(c.direction, c.objective)
    problem = Problem.objects.create(
        title=c.title,
        statement=statement,
        reference_solution=c.baseline,
        reference_provenance={
            "source": "frontiersmith",
            "campaign": ctx.fc.pk,
            "candidate": c.pk,
            "baseline": True,
        },
        harness=Harness.STDIO,
        time_limit_s=ctx.settings.execution_timeout,
        memory_mb=ctx.settings.memory_mb,
        comparison={"mode": "score", "verifier": c.verifier, "direction": c.direction},
        kind=ProblemKind.SYNTHESIZED,
        method=METHOD,
        origin_dataset=root.origin_dataset,
        origin_difficulty=root.origin_difficulty,
        metadata={
            "campaign": ctx.fc.pk,
            "frontiersmith": {
                "candidate": c.pk,
                "round": c.round,
                "operator": c.operator,
                "formulation": c.formulation,
                "parent_formulation": c.parent_formulation,
                "objective": c.objective,
                "direction": c.direction,
                "judged_divergence": c.judged_divergence,
                "execution_divergence": c.execution_divergence,
                "score_spread": c.score_spread,
                "generator": c.generator,
                "weak_solution": c.weak,
            },
        },
        parent=parent,
        lineage_root=root,
        lineage_depth=parent.lineage_depth + 1,
    )
    rows = []
    for ordinal, test in enumerate(c.tests):
        # The first test is the public example; the baseline's output is the stored "output"
        # (every score is relative to it).
        row = TestCase(
            problem=problem,
            tier="public" if ordinal == 0 else "medium",
            ordinal=ordinal,
            hidden=ordinal != 0,
            provenance={"generator_seed": ordinal + 1, "output": "baseline"},
        )
        row.input, row.output = test["input"], test["baseline_output"]
        rows.append(row)
    TestCase.objects.bulk_create(rows)
    ctx.fc.seed_pool.problems.add(problem)
    ctx.fc.output_set.problems.add(problem)
    SeedFormulation.objects.get_or_create(
        frontier=ctx.fc,
        problem=problem,
        defaults={k: c.formulation.get(k, "") for k in ("goal", "inputs", "outputs")},
    )
    return problem
