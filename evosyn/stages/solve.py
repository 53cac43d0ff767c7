"""Stage ``solve``: the M candidate solutions of instances, each stored as it arrives. One step
asks for the action's instance's missing solutions, side by side, and fills the step's waves of
calls with the next pending instances' (bounded by the fan-out setting and the endpoint's
limit)."""

from __future__ import annotations

import contextlib

from django.db import IntegrityError, transaction

from evolution.llm import fanout

from ..engine import prompts as P
from ..engine import pruning
from ..models import Instance, Solution
from .common import Action, Ctx, ask_program, instance_key, pending_like, width_for


def _asks(ctx: Ctx, action: Action) -> list[tuple[Instance, int]]:
    """The action's instance's missing solutions, then the next pending instances' up to the
    step's calls (``fanout.step_calls``: a step's fixed cost is spread over several waves)."""
    m, width = ctx.settings.solutions_per_problem, width_for(ctx, "solver")
    inst = Instance.objects.select_related("problem").get(pk=action.instance_id)
    asks: list[tuple[Instance, int]] = []
    target = fanout.step_calls(width)
    for other in [inst, *pending_like(ctx, inst)]:
        have = set(other.solutions.values_list("index", flat=True))
        missing = [(other, i) for i in range(m) if i not in have]
        asks += missing if other is inst else missing[: max(0, target - len(asks))]
        if len(asks) >= target:
            break
    return asks


def _solve(ctx: Ctx, action: Action) -> None:
    """Sample the missing solutions; each one is stored as soon as it arrives."""
    asks = _asks(ctx, action)
    fanout.parallel([lambda a=a: _solution(ctx, *a) for a in asks], width_for(ctx, "solver"))


def _solution(ctx: Ctx, inst: Instance, index: int) -> None:
    messages, template = P.solution_messages(statement=inst.statement, entry_point=inst.entry_point)
    code, error, call_id = ask_program(
        ctx,
        "solver",
        messages,
        template,
        key=f"{instance_key(inst)};solution={index}",
        temperature=ctx.settings.solution_temperature,
        parse=P.parse_solution,
    )
    with contextlib.suppress(IntegrityError), transaction.atomic():
        Solution.objects.create(
            instance=inst,
            index=index,
            code=code,
            code_sha=pruning.code_sha(code) if code else "",
            error=error,
            call_id=call_id,
        )
