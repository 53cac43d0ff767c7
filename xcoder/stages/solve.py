"""Stage ``solve``: candidate solutions from every solver endpoint, through the static gates."""

from __future__ import annotations

import ast

from django.db import IntegrityError, transaction

from evolution.judging import difficulty
from evolution.llm import fanout, mark_unparsable
from evolution.llm.parsing import ParseError, fenced_blocks

from ..engine import gates
from ..models import CandidateSolution, SynthTask, TaskStatus
from .common import Action, Ctx, discard_task, fan_out_calls, group_tasks, move_task, raise_first


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
    """Candidate solutions for the action's task and the tested tasks of its group: n =
    ``candidates`` answers spread over the solver endpoints (or ``candidates_per_endpoint``
    from each), all asked side by side (bounded by the fan-out setting and the solver
    endpoints' limits), each stored as it arrives with its static-gate verdict (a rerun asks
    only for missing ones)."""
    s = ctx.settings
    tasks = group_tasks(ctx, action, TaskStatus.TESTED)
    endpoints = list(ctx.xc.solver_endpoints.order_by("name"))
    have = set(
        CandidateSolution.objects.filter(task__in=tasks).values_list(
            "task_id", "endpoint_id", "sample"
        )
    )
    jobs = []
    for task in tasks:
        messages, template = difficulty.solver_messages(
            statement=task.statement, harness=task.harness, entry_point=task.entry_point
        )
        spread = s.samples_per_endpoint(len(endpoints))
        for endpoint, samples in zip(endpoints, spread, strict=True):
            for sample in range(samples):
                if (task.pk, endpoint.pk, sample) not in have:
                    jobs.append(
                        lambda t=task, e=endpoint, n=sample, m=messages, tp=template: _candidate(
                            ctx, t, e, n, m, tp
                        )
                    )
    outcomes = fan_out_calls(jobs, fanout.width_for(*endpoints))
    for task in tasks:
        _decide(ctx, task)
    raise_first(outcomes)


def _candidate(ctx: Ctx, task: SynthTask, endpoint, sample: int, messages, template) -> None:
    s = ctx.settings
    result = ctx.chat(
        "xcoder_solver",
        messages,
        template,
        endpoint=endpoint,
        key=f"task={task.index};solve;endpoint={endpoint.name};sample={sample}",
        temperature=s.solver_temperature,
    )
    tokens = result.tokens_out or gates.count_words(result.content)
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


def _decide(ctx: Ctx, task: SynthTask) -> None:
    """Solved once every candidate is in; too few passing the static gates discards it."""
    s = ctx.settings
    asked = sum(s.samples_per_endpoint(ctx.xc.solver_endpoints.count()))
    stored = CandidateSolution.objects.filter(task=task)
    if stored.count() < asked:
        return  # a call failed: the step's error; a rerun asks for the missing ones
    passing = stored.filter(passed_gates=True).count()
    task.refresh_from_db()
    if task.status != TaskStatus.TESTED:
        return
    if passing < s.min_candidates:
        discard_task(
            task,
            "too_few_candidates",
            f"{passing} candidate(s) passed the static gates; min_candidates is {s.min_candidates}",
        )
        return
    move_task(task, TaskStatus.SOLVED)
