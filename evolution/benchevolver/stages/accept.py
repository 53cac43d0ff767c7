"""Recording a decision (``decide_candidate``, used by the ``decide`` stage and by every stage
that rejects; pure logic in ``engine/accept.py``): a candidate is decided once, the lineage and its memory are updated and, on acceptance, the evolved problem is created.

An accepted candidate is screened for contamination first (``evolution.screening``): its
nearest public problems go into its validation ledger (step "contamination screen") and are
stored as the evolved problem's screen. The screen records, it never rejects: whether a
similarity is too high for a release is the curation gate's rule (docs/screening.md)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from evolution.benchevolver.engine import accept, memory
from evolution.benchevolver.engine.types import GeneratedTest
from evolution.benchevolver.models import (
    Candidate,
    CandidateStage,
    Decision,
    GlobalMemoryEntry,
    Lineage,
    LineageState,
)
from evolution.models import Problem, TestCase
from evolution.models.problems import ProblemKind
from evolution.screening import services as screening
from evolution.streams.kinds import unit_transition

from .common import (
    KIND_NAME,
    Ctx,
    append_ledger,
    candidate_comparison,
    candidate_starter,
    move_candidate,
)


@transaction.atomic
def decide_candidate(ctx: Ctx, cand: Candidate, decision: str, reason: str) -> None:
    """Record the decision once (a rerun finds it decided and does nothing), update the lineage,
    its memory and, for an acceptance, the accepted problem and global memory."""
    lineage = Lineage.objects.select_for_update().get(pk=ctx.lineage.pk)
    cand = Candidate.objects.select_for_update().select_related("parent").get(pk=cand.pk)
    if cand.decision:
        return
    cand.decision = decision
    cand.decision_reason = reason[:4000]
    cand.decided_at = timezone.now()
    lineage.iterations += 1
    if decision == Decision.ACCEPTED:
        screen = _screen(cand)
        problem = _accepted_problem(ctx, cand)
        screening.store(problem, screen, context="benchevolver")
        cand.accepted_problem = problem
        gain = (cand.level or 0) - (lineage.seed_level or 0)
        lineage.parent = problem
        lineage.parent_level = cand.level
        lineage.accepted_count += 1
        lineage.no_improve = 0
        lineage.best_level = max(lineage.best_level or 0, cand.level or 0)
        if not _store_decided(cand):
            return
        GlobalMemoryEntry.objects.create(
            campaign=ctx.campaign,
            family=cand.family or "unnamed",
            summary=cand.idea[:600],
            level_gain=gain,
            candidate=cand,
            decision=decision,
        )
    else:
        lineage.no_improve += 1
        if not _store_decided(cand):
            return
        if cand.family:
            # Attempted, not accepted: remembered so other lineages see what did not work.
            GlobalMemoryEntry.objects.create(
                campaign=ctx.campaign,
                family=cand.family,
                summary=cand.idea[:600],
                level_gain=(cand.level or 0) - (lineage.seed_level or 0) if cand.level else 0,
                candidate=cand,
                accepted=False,
                decision=decision,
            )
    record = {
        "round": cand.round,
        "decision": decision,
        "reason": reason[:400],
        "family": cand.family,
        "idea": cand.idea[:300],
        "level": cand.level,
        "pass_rate": cand.pass_rate,
        "errors": cand.error_pattern,
        # Each target model's verdicts: which model fails, and how, guides the next mutation.
        "errors_by_model": {
            model: {k: v for k, v in (row.get("verdicts") or {}).items() if k != "AC"}
            for model, row in (cand.panel_results or {}).items()
        },
        "parent_check": (cand.generators or {}).get("parent_outcome", ""),
        "repairs": cand.repairs_used,
    }
    lineage.memory = memory.remember(lineage.memory, record, window=ctx.settings.memory_raw_window)
    stop = accept.stop_reason(
        iterations=lineage.iterations,
        accepted=lineage.accepted_count,
        no_improve=lineage.no_improve,
        best_level=lineage.best_level if lineage.accepted_count else None,
        settings=ctx.settings,
    )
    lineage.save(
        update_fields=[
            "iterations",
            "parent",
            "parent_level",
            "accepted_count",
            "no_improve",
            "best_level",
            "memory",
            "updated_at",
        ]
    )
    if stop and unit_transition(
        KIND_NAME,
        Lineage.objects.filter(pk=lineage.pk),
        source=LineageState.EVOLVING,
        target=LineageState.DONE,
        stop_reason=stop,
    ):
        lineage.state, lineage.stop_reason = LineageState.DONE, stop
    ctx.lineage = lineage


# What a decision changes on its candidate (an acceptance adds its contamination screen).
DECIDED_FIELDS = (
    "decision",
    "decision_reason",
    "decided_at",
    "accepted_problem",
    "validation_ledger",
)


def _screen(cand: Candidate) -> dict:
    """Screen the candidate against the public corpora (its own lineage apart) and ledger its
    nearest public problems; returns the full record, stored with the accepted problem."""
    record = screening.screen_candidate(
        statement=cand.statement, code=cand.code, parent=cand.parent
    )
    append_ledger(cand, screening.ledger_entry(record))
    return record


def _store_decided(cand: Candidate) -> bool:
    """Store the decided candidate and move it to DECIDED from the stage it is in. The row is
    locked, so it moves; were it not, the decision's writes (an accepted problem) are undone."""
    if move_candidate(cand, CandidateStage.DECIDED, *DECIDED_FIELDS):
        return True
    transaction.set_rollback(True)
    return False


def _accepted_problem(ctx: Ctx, cand: Candidate) -> Problem:
    parent = cand.parent
    root = parent.lineage_root or parent
    problem = Problem.objects.create(
        title=cand.title or f"{root.title} (evolved, round {cand.round})",
        statement=cand.statement,
        reference_solution=cand.code,
        reference_provenance={
            "source": "benchevolver",
            "campaign": ctx.campaign.pk,
            "candidate": cand.pk,
            "round": cand.round,
        },
        harness=cand.harness,
        entry_point=cand.entry_point,
        starter_code=candidate_starter(ctx, cand),
        comparison=candidate_comparison(cand),
        time_limit_s=ctx.settings.execution_timeout,
        memory_mb=ctx.settings.memory_mb,
        kind=ProblemKind.EVOLVED,
        method="benchevolver",
        origin_dataset=root.origin_dataset,
        origin_difficulty=root.origin_difficulty,
        metadata={
            "campaign": ctx.campaign.pk,
            "candidate": cand.pk,
            "family": cand.family,
            "level": cand.level,
            "seed_level": ctx.lineage.seed_level,
            "pass_rate": cand.pass_rate,
        },
        parent=parent,
        lineage_root=root,
        lineage_depth=parent.lineage_depth + 1,
    )
    counters: dict[str, int] = {}
    rows = []
    for data in cand.tests:
        test = GeneratedTest.from_dict(data)
        ordinal = counters.get(test.tier, 0)
        counters[test.tier] = ordinal + 1
        row = TestCase(
            problem=problem,
            tier=test.tier,
            ordinal=ordinal,
            hidden=test.hidden,
            provenance=test.provenance,
        )
        row.input = test.input
        row.output = test.output
        rows.append(row)
    TestCase.objects.bulk_create(rows)
    return problem
