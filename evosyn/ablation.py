"""The document's ablations run over a campaign's stored pass matrices (``engine/ablation.py``
says what they are and why sub-sampling the stored matrices is them): Figure 4b's usable
instances per M x N and Table 1's consistency score per K, with and without Criterion-1.

No model is called: the solutions, testings and their matrices are the campaign's. The strategy
program runs in the sandbox, live, once per instance and (M, N) pair, all in one session; those
executions are the ablation's (recorded on it), not the campaign's budget. The result is an
``Ablation`` row the campaign page draws (``python manage.py evosyn_ablation``).
"""

from __future__ import annotations

import time

from django.core.exceptions import ValidationError

from evolution import sandbox

from .config import EvoSynSettings
from .engine import ablation as A
from .engine import pruning
from .engine import strategy as S
from .models import Ablation, EvoSynCampaign, InstanceRole, InstanceStatus, Strategy


def _strategy(esc: EvoSynCampaign, choice: str) -> tuple[Strategy | None, str, str]:
    """(row, label, code) of the strategy the ablation applies: "best" (the campaign's best,
    what its filter used), "initial" (the document's initial strategy, Table 1's choice) or a
    version ("3" or "v3")."""
    choice = (choice or "best").strip().lower()
    if choice == "initial":
        return None, "initial (the document's)", S.INITIAL_STRATEGY
    if choice == "best":
        best = esc.best_strategy
        if best is None:
            raise ValidationError(
                {"strategy": ["the campaign has no best strategy yet: use --strategy initial"]}
            )
        return best, f"best: v{best.version}", best.code
    try:
        version = int(choice.removeprefix("v"))
    except ValueError:
        raise ValidationError(
            {"strategy": [f"{choice!r} is not best, initial or a version (v3)"]}
        ) from None
    row = esc.strategies.filter(version=version).first()
    if row is None or not row.code:
        raise ValidationError({"strategy": [f"the campaign has no strategy v{version} to run"]})
    return row, f"v{version}", row.code


def ablation_run(
    *,
    campaign_id: int,
    m_values: list[int],
    n_values: list[int],
    k_values: list[int],
    strategy: str = "best",
) -> Ablation:
    """Run the M x N x K grid over campaign ``campaign_id``'s stored matrices and store it.
    ValidationError (keyed "m", "n", "k", "strategy" or "campaign") for a bad grid, an unknown
    strategy, or a campaign with no matrix yet."""
    started = time.monotonic()
    esc = EvoSynCampaign.objects.select_related("campaign", "best_strategy").get(pk=campaign_id)
    errors = {}
    for key, values, low in (("m", m_values, 2), ("n", n_values, 1), ("k", k_values, 1)):
        if not values or min(values) < low:
            errors[key] = [f"{key} values must be integers of at least {low}, got {values}"]
    if errors:
        raise ValidationError(errors)
    settings = EvoSynSettings.from_dict(esc.campaign.settings)
    row, label, code = _strategy(esc, strategy)
    instances = list(
        esc.instances.filter(matrix__isnull=False)
        .exclude(status=InstanceStatus.PENDING)
        .prefetch_related("solutions")
        .order_by("role", "slot")
    )
    seeds = [i for i in instances if i.role == InstanceRole.SEED and i.human is not None]
    synthetic = [i for i in instances if i.role == InstanceRole.SYNTHETIC]
    if not seeds and not synthetic:
        raise ValidationError({"campaign": ["the campaign has no stored pass matrix yet"]})
    stored_m, stored_n = settings.solutions_per_problem, settings.tests_per_problem
    ms, ns, ks = sorted(set(m_values)), sorted(set(n_values)), sorted(set(k_values))
    pairs = [(m, n) for m in ms for n in ns if m <= stored_m and n <= stored_n]

    # One strategy run per (pair, instance) whose sub-matrix can be ranked, in one session.
    jobs = []
    for pair in pairs:
        for inst in seeds + synthetic:
            rows, columns = A.sub_matrix(inst.matrix, m=pair[0], n=pair[1])
            if A.usable(rows, columns):
                jobs.append((pair, inst, rows, columns))
    matrices = [A.take(inst.matrix["rows"], rows, cols) for _, inst, rows, cols in jobs]
    results = S.run_strategy(
        code,
        matrices,
        [len(cols) for *_, cols in jobs],
        run_batch=sandbox.run_batch,
        limits=sandbox.Limits(time_s=settings.strategy_time_s, memory_mb=settings.memory_mb),
    )
    ranked = {
        (pair, inst.pk): (rows, matrix, result)
        for (pair, inst, rows, _), matrix, result in zip(jobs, matrices, results, strict=True)
    }

    cells = []
    for m in ms:
        for n in ns:
            seed_runs = [(i, *ranked[(m, n), i.pk]) for i in seeds if ((m, n), i.pk) in ranked]
            synthetic_runs = [(i, *ranked.get(((m, n), i.pk), ((), None, None))) for i in synthetic]
            usable, pruned = _filtered(synthetic_runs, settings.selected_tests)
            for k in ks:
                why = A.unavailable(m=m, n=n, k=k, stored_m=stored_m, stored_n=stored_n)
                cell = {"m": m, "n": n, "k": k, "available": not why, "reason": why}
                if not why:
                    cell.update(
                        A.consistency(_checks(seed_runs, k), k).to_dict(),
                        exec_per_seed=S.executions_per_instance(k),
                        matrix_executions=m * n,
                        synthetic=len(synthetic),
                        usable=usable,
                        pruned=pruned,
                    )
                cells.append(cell)
    return Ablation.objects.create(
        evosyn=esc,
        strategy=row,
        strategy_label=label,
        code=code,
        m_values=ms,
        n_values=ns,
        k_values=ks,
        stored_m=stored_m,
        stored_n=stored_n,
        replayed=esc.campaign.replayed,
        cells=cells,
        sandbox_executions=len(jobs),
        elapsed_s=round(time.monotonic() - started, 3),
    )


def _checks(seed_runs: list, k: int) -> list[S.InstanceCheck]:
    """Criterion-1 and Criterion-2 at ``k`` on every seed instance ranked in one (M, N)."""
    checks = []
    for inst, rows, matrix, result in seed_runs:
        if isinstance(result, S.StrategyFailure):
            checks.append(S.InstanceCheck(inst.slot, False, False, error=str(result)[:300], k=k))
            continue
        human = [inst.human[r] for r in rows]
        checks.append(S.check_instance(inst.slot, result, matrix=matrix, human=human, k=k))
    return checks


def _filtered(synthetic_runs: list, selected_tests: int) -> tuple[int, dict[str, int]]:
    """Figure 4b's measure for one (M, N): how many synthesized problems the filter keeps
    (``pruning.decide``, the filter stage's rule), and why it prunes the others. A problem whose
    sub-matrix has fewer than two solutions or no testing is not ranked, as in the campaign."""
    kept, pruned = 0, {}

    def count(cause: str) -> None:
        pruned[cause] = pruned.get(cause, 0) + 1

    for inst, rows, matrix, result in synthetic_runs:
        if result is None:
            count("too little to rank")
        elif isinstance(result, S.StrategyFailure):
            count("strategy failure")
        else:
            codes = {s.index: s.code for s in inst.solutions.all()}
            decision = pruning.decide(
                matrix,
                [codes.get(inst.matrix["solutions"][r], "") for r in rows],
                solutions=result.solutions,
                tests=result.tests,
                test_scores=result.test_scores,
                selected_tests=selected_tests,
            )
            if decision.kept:
                kept += 1
            else:
                count(decision.cause)
    return kept, pruned
