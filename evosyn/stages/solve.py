"""Stage ``solve``: the M candidate solutions of an instance, each stored as it arrives."""

from __future__ import annotations

import contextlib

from django.db import IntegrityError, transaction

from evolution.llm import BudgetExhausted, LLMError, ParseError, mark_unparsable

from ..engine import prompts as P
from ..engine import pruning
from ..models import Instance, Solution
from .common import Action, Ctx, _instance_key


def _solve(ctx: Ctx, action: Action) -> None:
    """Sample the missing solutions; each one is stored as soon as it arrives."""
    inst = Instance.objects.select_related("problem").get(pk=action.instance_id)
    have = set(inst.solutions.values_list("index", flat=True))
    messages, template = P.solution_messages(statement=inst.statement, entry_point=inst.entry_point)
    for index in range(ctx.settings.solutions_per_problem):
        if index in have:
            continue
        code, error, call_id = "", "", None
        try:
            answer = ctx.chat(
                "solver",
                messages,
                template,
                key=f"{_instance_key(inst)};solution={index}",
                temperature=ctx.settings.solution_temperature,
            )
            call_id = answer.call_id
            code = P.parse_solution(answer.content)
        except ParseError as exc:
            error = f"unparsable answer: {exc}"
            mark_unparsable(call_id, str(exc))
        except BudgetExhausted:
            raise
        except LLMError as exc:
            error = f"model call failed: {exc}"[:1000]
        with contextlib.suppress(IntegrityError), transaction.atomic():
            Solution.objects.create(
                instance=inst,
                index=index,
                code=code,
                code_sha=pruning.code_sha(code) if code else "",
                error=error,
                call_id=call_id,
            )
