"""Stage ``solve``: candidate solutions from every solver endpoint, through the static gates."""

from __future__ import annotations

import ast

from django.db import IntegrityError, transaction

from evolution.benchevolver.engine import difficulty
from evolution.llm import mark_unparsable
from evolution.llm.parsing import ParseError, fenced_blocks

from ..engine import gates
from ..models import CandidateSolution, SynthTask, TaskStatus
from .common import Action, Ctx, _reject_discard


def solution_gate(
    content: str, *, tokens_out: int, max_tokens: int, think_tags: str = "off"
) -> tuple[str, str]:
    """C.1 static gates: (code, "") or ("", reason). With ``think_tags`` "required", complete
    think and answer tags (the code is taken from the answer part only); exactly one fenced
    code block, which parses as Python, in an answer within the token cap."""
    if tokens_out > max_tokens:
        return "", f"answer of {tokens_out} tokens exceeds the cap of {max_tokens}"
    if think_tags == "required":
        content, reason = gates.think_answer(content)
        if reason:
            return "", f"think/answer tags: {reason}"
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
    """Candidate solutions: n = ``candidates`` answers spread over the solver endpoints (or
    ``candidates_per_endpoint`` from each), each
    stored as it arrives with its static-gate verdict (a rerun asks only for missing ones)."""
    s = ctx.settings
    task = SynthTask.objects.get(pk=action.task_id)
    have = set(CandidateSolution.objects.filter(task=task).values_list("endpoint_id", "sample"))
    messages, template = difficulty.solver_messages(
        statement=task.statement, harness=task.harness, entry_point=task.entry_point
    )
    endpoints = list(ctx.xc.solver_endpoints.order_by("name"))
    for endpoint, samples in zip(endpoints, s.samples_per_endpoint(len(endpoints)), strict=True):
        for sample in range(samples):
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
                result.content,
                tokens_out=tokens,
                max_tokens=s.max_solution_tokens,
                think_tags=s.think_tags,
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
    task.status = TaskStatus.SOLVED
    task.save(update_fields=["status", "updated_at"])
