"""Proposal (stage ``propose``; pure logic in ``engine/propose.py``): the mutator evolves the
parent's reference, the writer states the new problem, and the candidate row is created.

The candidate keeps its parent's harness E (Algorithm 1: I' = (S', C', T', E)): the same harness
(stdio, function or assert), entry point and calling convention; a mutation that cannot be called
that way is an error, recorded, and the lineage goes on.

The mutator and the writer answer before the candidate row exists: their calls are filed under
the lineage alone, and the candidate is stored together with them attached (one transaction),
so a worker killed in between leaves calls the round's rerun attaches. An answer that cannot
be parsed is ledgered ``unparsable`` with the parse error."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from evolution.benchevolver.engine import accept, memory, propose
from evolution.benchevolver.engine.types import StageError
from evolution.benchevolver.models import (
    Candidate,
    CandidateStage,
    Decision,
    GlobalMemoryEntry,
    Lineage,
    LineageState,
)
from evolution.llm import BudgetExhausted, LLMError
from evolution.models import LLMCall
from evolution.streams.kinds import unit_created, unit_transition

from .accept import decide_candidate
from .common import KIND_NAME, Action, Ctx, parse_answer

# The roles whose calls make a candidate before its row exists.
PROPOSAL_ROLES = ("mutator", "writer")


def _memory_texts(ctx: Ctx) -> tuple[str, str]:
    local = memory.digest_text(ctx.lineage.memory, recent_k=ctx.settings.memory_digest_recent_k)
    others = GlobalMemoryEntry.objects.filter(campaign=ctx.campaign).exclude(
        candidate__lineage=ctx.lineage
    )
    entries = list(
        others.filter(accepted=True)
        .order_by("created_at")
        .values_list("family", "summary", "level_gain")
    )
    attempted = list(
        others.filter(accepted=False).order_by("created_at").values_list("family", "decision")
    )
    glob = memory.global_text(
        entries,
        max_entries=ctx.settings.global_memory_max_entries,
        max_chars=ctx.settings.global_memory_max_chars,
        attempted=attempted,
    )
    return local, glob


def act_propose(ctx: Ctx, action: Action) -> None:
    lineage = ctx.lineage
    stop = accept.stop_reason(
        iterations=lineage.iterations,
        accepted=lineage.accepted_count,
        no_improve=lineage.no_improve,
        best_level=lineage.best_level if lineage.accepted_count else None,
        settings=ctx.settings,
    )
    if stop:
        unit_transition(
            KIND_NAME,
            Lineage.objects.filter(pk=lineage.pk),
            source=LineageState.EVOLVING,
            target=LineageState.DONE,
            stop_reason=stop,
        )
        return
    parent = lineage.parent or ctx.seed
    round_no = lineage.candidates.count() + 1
    harness = parent.harness
    entry_point = "" if harness == "stdio" else parent.entry_point
    local, glob = _memory_texts(ctx)
    record = {
        "round": round_no,
        "parent": parent.pk,
        "memory_context": f"## Lineage memory\n{local or '(empty)'}\n\n## Global memory\n{glob or '(empty)'}",
    }
    calls: list[int] = []  # this step's proposal calls, attached to the candidate
    try:
        messages, template = propose.mutator_messages(
            parent_code=parent.reference_solution,
            harness=harness,
            entry_point=entry_point,
            parent_level=lineage.parent_level or 1,
            seed_level=lineage.seed_level or 1,
            lineage_memory=local,
            global_memory=glob,
            starter_code=parent.starter_code,
        )
        answer = _chat(ctx, calls, "mutator", messages, template, key=f"round={round_no}")
        mutation = parse_answer(answer, propose.parse_mutation)
        record.update(code=mutation.code, idea=mutation.idea, family=mutation.family)
        propose.check_calling_convention(
            mutation.code,
            harness=harness,
            entry_point=entry_point,
            starter_code=parent.starter_code,
            parent_code=parent.reference_solution,
        )
        messages, template = propose.writer_messages(
            code=mutation.code,
            harness=harness,
            entry_point=entry_point,
            time_limit=ctx.settings.execution_timeout,
            starter_code=parent.starter_code,
        )
        answer = _chat(ctx, calls, "writer", messages, template, key=f"round={round_no}")
        written = parse_answer(answer, propose.parse_written)
    except (StageError, LLMError) as exc:
        if isinstance(exc, BudgetExhausted):
            raise
        reason = exc.reason if isinstance(exc, StageError) else f"model call failed: {exc}"
        cand = _create_candidate(ctx, round_no, parent, harness, entry_point, record, calls)
        if cand is not None:
            decide_candidate(ctx, cand, Decision.ERROR, reason)
        return
    record.update(
        title=written.title,
        statement=written.statement,
        generators={
            "statement_body": written.statement,
            "examples": written.examples,
            # Function-level answers are JSON values: token layout never matters there.
            "contract": written.contract
            if harness == "stdio" or written.contract["kind"] not in ("tokens", "checker")
            else {"kind": "exact"},
        },
        parent_weakness=mutation.parent_weakness,
        code_diff=propose.code_diff(parent.reference_solution, mutation.code),
    )
    _create_candidate(ctx, round_no, parent, harness, entry_point, record, calls)


def _chat(ctx: Ctx, calls: list[int], role: str, messages, template, *, key: str):
    """``ctx.chat``, noting the call's ledger row (answered or failed) in ``calls``."""
    try:
        answer = ctx.chat(role, messages, template, key=key)
    except LLMError as exc:
        if exc.call_id is not None:
            calls.append(exc.call_id)
        raise
    calls.append(answer.call_id)
    return answer


def _attach_calls(ctx: Ctx, cand: Candidate, calls: list[int]) -> None:
    """File the round's proposal calls under ``cand``: this step's, and those an earlier,
    interrupted try of the round left without a candidate (every earlier round's were attached
    when its candidate was stored, so a lineage's unattached proposal calls up to this step's
    last one are this round's)."""
    orphans = LLMCall.objects.filter(
        lineage=ctx.lineage, candidate__isnull=True, role__in=PROPOSAL_ROLES
    )
    if calls:
        orphans = orphans.filter(pk__lte=max(calls))
    LLMCall.objects.filter(pk__in=calls).update(candidate=cand)
    orphans.update(candidate=cand)


def _create_candidate(
    ctx, round_no, parent, harness, entry_point, record, calls
) -> Candidate | None:
    try:
        with transaction.atomic():
            cand = Candidate.objects.create(
                lineage=ctx.lineage,
                round=round_no,
                parent=parent,
                harness=harness,
                entry_point=entry_point,
                stage=unit_created(KIND_NAME, CandidateStage.PROPOSED),
                code=record.get("code", ""),
                idea=record.get("idea", ""),
                family=record.get("family", ""),
                title=record.get("title", ""),
                statement=record.get("statement", ""),
                generators=record.get("generators", {}),
                parent_weakness=record.get("parent_weakness", ""),
                code_diff=record.get("code_diff", ""),
                memory_context=record["memory_context"],
            )
            _attach_calls(ctx, cand, calls)
            return cand
    except IntegrityError:
        # This round exists already (a concurrent rerun stored it): its calls go with it.
        existing = ctx.lineage.candidates.filter(round=round_no).first()
        if existing is not None:
            _attach_calls(ctx, existing, calls)
        return None
