"""Stage ``filter``: the best strategy selects a synthetic problem's testing; identical-solution
and zero-variance pruning (``engine/pruning.py``) record their reasons; a kept problem becomes a
``Problem``."""

from __future__ import annotations

from django.db import transaction

from evolution import sandbox
from evolution.models import Problem, ProblemSet, TestCase
from evolution.models.problems import ProblemKind
from evolution.streams.kinds import unit_transition

from ..engine import pruning
from ..engine import strategy as S
from ..models import EvoSynCampaign, Instance, InstanceStatus, Solution
from .common import KIND_NAME, METHOD, Action, Ctx, reserve_executions, spend_executions


def _filter(ctx: Ctx, action: Action) -> None:
    """Apply the best strategy: it ranks the solutions and the testings; the kept problem takes
    the strongest solution and the top-ranked testing(s) it passes (``selected_tests``, the
    document keeps one). Zero-Variance Pruning (identical solutions, testings that rank
    nothing), an unsolvable problem or a failing strategy prune it, reason recorded. The
    ranking and selection of a problem only Zero-Variance Pruning dropped are kept too
    (``ranking["relaxed"]``): that is the document's D^relaxed."""
    inst = Instance.objects.select_related("problem").get(pk=action.instance_id)
    strategy = ctx.esc.best_strategy
    code = strategy.code if strategy else S.INITIAL_STRATEGY
    solutions = {s.index: s for s in inst.solutions.all()}
    testings = inst.testings()
    rows = inst.matrix["rows"]
    sol_order, test_order = inst.matrix["solutions"], inst.matrix["tests"]

    def prune(reason: str, ranking: dict | None = None) -> None:
        unit_transition(
            KIND_NAME,
            Instance.objects.filter(pk=inst.pk),
            source=InstanceStatus.READY,
            target=InstanceStatus.PRUNED,
            status_reason=reason,
            ranking=ranking or {},
        )

    reserve_executions(ctx, 1)
    (result,) = S.run_strategy(
        code, [rows], [len(test_order)], run_batch=sandbox.run_batch, limits=ctx.strategy_limits
    )
    spend_executions(ctx, 1)
    if isinstance(result, S.StrategyFailure):
        return prune(f"strategy v{strategy.version if strategy else 1} failed: {result}"[:2000])
    ranking = {
        "strategy_version": strategy.version if strategy else None,
        "solutions": [sol_order[i] for i in result.solutions],
        "tests": [test_order[j] for j in result.tests],
        "test_scores": result.test_scores,
    }
    decision = pruning.decide(
        rows,
        [solutions[i].code for i in sol_order],
        solutions=result.solutions,
        tests=result.tests,
        test_scores=result.test_scores,
        selected_tests=ctx.settings.selected_tests,
    )
    if decision.selected:
        strongest = solutions[sol_order[decision.top]]
        ranking.update(
            strongest_solution=strongest.index,
            selected_tests=[test_order[j] for j in decision.selected],
            relaxed=True,  # in D^relaxed: everything but Zero-Variance Pruning holds
        )
    if not decision.kept:
        return prune(decision.reason, ranking)
    with transaction.atomic():
        if not unit_transition(
            KIND_NAME,
            Instance.objects.filter(pk=inst.pk),
            source=InstanceStatus.READY,
            target=InstanceStatus.KEPT,
            ranking=ranking,
            status_reason="",
        ):
            return
        inst.ranking = ranking
        chosen = selected_unit_tests(testings, ranking["selected_tests"])
        problem = _kept_problem(ctx, inst, strongest, chosen)
        Instance.objects.filter(pk=inst.pk).update(kept_problem=problem)


def selected_unit_tests(testings: dict[int, list], numbers: list[int]) -> list:
    """The unit tests of the selected testings, in rank order, a repeated input once."""
    chosen, seen = [], set()
    for number in numbers:
        for item in testings.get(number, []):
            if item.input not in seen:
                seen.add(item.input)
                chosen.append(item)
    return chosen


def _output_set(ctx: Ctx) -> ProblemSet:
    esc = EvoSynCampaign.objects.select_for_update().get(pk=ctx.esc.pk)
    if esc.output_set_id:
        return esc.output_set
    problem_set, _ = ProblemSet.objects.get_or_create(
        name=f"evosyn-{esc.pk}: {ctx.campaign.name}"[:120],
        defaults={
            "description": "Problems kept by an EvoSyn campaign (selected tests, strongest "
            "solution).",
            "source": METHOD,
        },
    )
    esc.output_set = problem_set
    esc.save(update_fields=["output_set", "updated_at"])
    return problem_set


def _kept_problem(ctx: Ctx, inst: Instance, strongest: Solution, selected: list) -> Problem:
    seed = inst.problem
    root = seed.lineage_root or seed
    problem = Problem.objects.create(
        title=inst.title or inst.entry_point,
        statement=inst.statement,
        reference_solution=strongest.code,
        reference_provenance={
            "source": "evosyn",
            "campaign": ctx.campaign.pk,
            "instance": inst.pk,
            "solution": strongest.index,
        },
        harness=inst.harness,
        entry_point=inst.entry_point,
        time_limit_s=ctx.settings.execution_time_s,
        memory_mb=ctx.settings.memory_mb,
        kind=ProblemKind.SYNTHESIZED,
        method=METHOD,
        origin_dataset=root.origin_dataset,
        metadata={
            "campaign": ctx.campaign.pk,
            "instance": inst.pk,
            "strategy_version": inst.ranking.get("strategy_version")
            if isinstance(inst.ranking, dict)
            else None,
            "solutions": len(inst.matrix["solutions"]),
            "candidate_testings": len(inst.matrix["tests"]),
            "selected_testings": inst.ranking.get("selected_tests", []),
            "unit_tests": len(selected),
        },
        parent=seed,
        lineage_root=root,
        lineage_depth=seed.lineage_depth + 1,
    )
    rows = []
    for ordinal, test in enumerate(selected):
        row = TestCase(
            problem=problem,
            tier="small",
            ordinal=ordinal,
            hidden=True,
            provenance={
                "source": "evosyn",
                "instance": inst.pk,
                "testing": test.call,
                "test": test.index,
            },
        )
        row.input = test.input
        row.output = test.output
        rows.append(row)
    TestCase.objects.bulk_create(rows)
    _output_set(ctx).problems.add(problem)
    return problem
