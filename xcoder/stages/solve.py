"""Stage ``solve``: candidate solutions from every solver endpoint, through the static gates."""

from __future__ import annotations

import ast

from django.db import IntegrityError, transaction

from evolution.judging import difficulty
from evolution.llm import mark_unparsable
from evolution.llm.parsing import ParseError, fenced_blocks

from ..engine import gates
from ..models import CandidateSolution, SynthTask, TaskStatus
from .common import Action, Ctx, _reject_discard, move_task


def solution_gate(content: str, *, tokens_out: int, max_tokens: int) -> tuple[str, str]:
    """C.1 static gates: (code, "") or ("", reason). Exactly one fenced code block, which
    parses as Python, in an answer within the token cap."""
    if tokens_out > max_tokens:
        return "", f"answer of {tokens_out} tokens exceeds the cap of {max_tokens}"
    try:
        blocks = fenced_blocks(content or "")
    except ParseError as exc:
        return "", str(exc)
    if len(blocks) != 1:
        return "", f"{len(blocks)} code blocks: exactly one is required"
    code, problem = difficulty.solver_code(content)
    if not code:
        return "", problem
    try:
        ast.parse(code)
    except SyntaxError as exc:
        return "", f"the code does not parse: {exc.msg} (line {exc.lineno})"
    return code, ""


def act_solve(ctx: Ctx, action: Action) -> None:
    """Candidate solutions: ``candidates_per_endpoint`` answers from every solver endpoint, each
    stored as it arrives with its static-gate verdict (a rerun asks only for missing ones)."""
    s = ctx.settings
    task = SynthTask.objects.get(pk=action.task_id)
    have = set(CandidateSolution.objects.filter(task=task).values_list("endpoint_id", "sample"))
    messages, template = difficulty.solver_messages(
        statement=task.statement, harness=task.harness, entry_point=task.entry_point
    )
    for endpoint in ctx.xc.solver_endpoints.order_by("name"):
        for sample in range(s.candidates_per_endpoint):
            if (endpoint.pk, sample) in have:
                continue
            result = ctx.chat(
                endpoint,
                messages,
                role="xcoder_solver",
                template=template,
                key=f"task={task.index};solve;endpoint={endpoint.name};sample={sample}",
                temperature=s.solver_temperature,
            )
            tokens = result.tokens_out or gates.count_tokens(result.content)
            code, reason = solution_gate(
                result.content, tokens_out=tokens, max_tokens=s.max_solution_tokens
            )
            if reason:
                mark_unparsable(result.call_id, reason)
            try:
                with transaction.atomic():
                    CandidateSolution.objects.create(
                        task=task,
                        endpoint=endpoint,
                        sample=sample,
                        content=result.content,
                        code=code,
                        tokens_out=tokens,
                        passed_gates=not reason,
                        reason=reason[:500],
                        call_id=result.call_id,
                    )
            except IntegrityError:
                pass
    passing = CandidateSolution.objects.filter(task=task, passed_gates=True).count()
    task.refresh_from_db()
    if task.status != TaskStatus.TESTED:
        return
    if passing < s.min_candidates:
        _reject_discard(
            task,
            "too_few_candidates",
            f"{passing} candidate(s) passed the static gates; min_candidates is {s.min_candidates}",
        )
        return
    move_task(task, TaskStatus.SOLVED)
