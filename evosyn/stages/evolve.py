"""Stage ``evolve``: one iteration of the strategy search (MAP-Elites over islands; pure logic in
``engine/search.py`` and ``engine/strategy.py``), scored on every seed matrix in the sandbox."""

from __future__ import annotations

import random

from django.db import transaction

from evolution import sandbox

from ..engine import prompts as P
from ..engine import search
from ..engine import strategy as S
from ..models import (
    EvoSynCampaign,
    Instance,
    InstanceRole,
    InstanceStatus,
    Strategy,
    StrategyStatus,
)
from .common import Action, Ctx, ask_program, reserve_executions, spend_executions


def _seed_matrices(ctx: Ctx) -> list[Instance]:
    return list(
        ctx.esc.instances.filter(role=InstanceRole.SEED, status=InstanceStatus.READY).order_by(
            "slot"
        )
    )


def strategy_evaluate(ctx: Ctx, code: str) -> tuple[S.Evaluation, str]:
    """Score ``code`` on every ready seed instance, Criterion-2 at the campaign's K
    (``consistency_k``): (evaluation, MAP-Elites cell)."""
    seeds = _seed_matrices(ctx)
    matrices = [i.matrix["rows"] for i in seeds]
    reserve_executions(ctx, len(matrices))
    results = S.run_strategy(
        code,
        matrices,
        [len(i.matrix["tests"]) for i in seeds],
        run_batch=sandbox.run_batch,
        limits=ctx.strategy_limits,
    )
    spend_executions(ctx, len(matrices))
    checks = []
    for inst, matrix, result in zip(seeds, matrices, results, strict=True):
        if isinstance(result, S.StrategyFailure):
            checks.append(
                S.InstanceCheck(
                    inst.slot, False, False, error=str(result)[:500], k=ctx.settings.consistency_k
                )
            )
        else:
            checks.append(
                S.check_instance(
                    inst.slot,
                    result,
                    matrix=matrix,
                    human=inst.human,
                    k=ctx.settings.consistency_k,
                )
            )
    evaluation = S.evaluate(checks)
    cell = search.features(code, evaluation.checks, matrices, ctx.settings.feature_bins)
    return evaluation, cell


def _evolve(ctx: Ctx, action: Action) -> None:
    """One iteration of the search. Iteration 0 scores the initial strategy; later ones ask the
    strategist to improve an island's elite. Failures of the program score 0 and are kept."""
    s, iteration = ctx.settings, action.number
    rng = random.Random(f"{ctx.esc.pk}:{iteration}")
    parent, island, call_id, error = None, 0, None, ""
    selection: dict = {}
    archive = ctx.esc.archive or search.empty_archive(s.num_islands)
    if iteration == 0:
        code = S.INITIAL_STRATEGY
    else:
        island = (iteration - 1) % s.num_islands
        elite, mode = search.select_parent(
            archive, island, exploitation_ratio=s.exploitation_ratio, rng=rng
        )
        # Recorded with the strategy: where its parent came from in the island's archive.
        selection = {
            "island": island,
            "mode": mode,
            "parent": elite.strategy_id if elite else None,
            "cell": elite.cell if elite else None,
            "archive": sorted(v["strategy"] for v in archive["islands"][island].values()),
        }
        parent = Strategy.objects.get(pk=elite.strategy_id) if elite else ctx.esc.best_strategy
        if parent is None:
            # Nothing placed yet (the initial strategy failed on every seed): the strategist
            # improves the initial program itself, as its score-0 record shows.
            parent = ctx.esc.strategies.get(iteration=0)
        others = [
            Strategy.objects.get(pk=e.strategy_id)
            for e in search.inspirations(archive, island, elite)
        ]
        messages, template = P.strategy_messages(
            parent={
                "code": parent.code,
                "score": parent.score,
                "criterion1": parent.criterion1,
                "criterion2": parent.criterion2,
            },
            inspirations=[{"code": o.code, "score": o.score} for o in others],
            k=s.consistency_k,
        )
        code, error, call_id = ask_program(
            ctx,
            "strategist",
            messages,
            template,
            key=f"iteration={iteration}",
            temperature=s.strategist_temperature,
            parse=P.parse_strategy,
        )
    if code:
        evaluation, cell = strategy_evaluate(ctx, code)
        status = evaluation.status
        if status == StrategyStatus.FAILED:
            error = evaluation.checks[0]["error"] if evaluation.checks else "no seed instance"
    else:
        evaluation, cell, status = S.evaluate([]), "", StrategyStatus.UNPARSABLE
    with transaction.atomic():
        esc = EvoSynCampaign.objects.select_for_update().get(pk=ctx.esc.pk)
        if esc.strategies.filter(iteration=iteration).exists():
            return  # stored by an earlier attempt whose commit we did not see
        best = esc.best_strategy
        strategy = Strategy.objects.create(
            evosyn=esc,
            version=esc.strategies.count() + 1,
            iteration=iteration,
            island=island,
            parent=parent,
            code=code,
            status=status,
            error=error[:4000],
            score=evaluation.score,
            criterion1=evaluation.criterion1_rate,
            criterion2=evaluation.criterion2_rate,
            cell=cell,
            best_so_far=max(evaluation.score, best.score if best else 0.0),
            evaluation={**evaluation.to_dict(), "selection": selection},
            call_id=call_id,
        )
        archive = esc.archive or search.empty_archive(s.num_islands)
        placed = False
        if status in (StrategyStatus.OK, StrategyStatus.PARTIAL):
            elite = search.Elite(strategy.pk, strategy.score, cell)
            targets = range(len(archive["islands"])) if iteration == 0 else [island]
            for target in targets:
                placed = search.insert(archive, target, elite) or placed
        if iteration and iteration % s.migration_interval == 0:
            search.migrate(archive, iteration)
        # Strictly better replaces the best: the earliest program wins a tie (versioned).
        new_best = best is None or (placed and strategy.score > best.score)
        esc.archive = archive
        if new_best and status in (StrategyStatus.OK, StrategyStatus.PARTIAL):
            esc.best_strategy = strategy
        esc.save(update_fields=["archive", "best_strategy", "updated_at"])
        if placed:
            Strategy.objects.filter(pk=strategy.pk).update(placed=True)
