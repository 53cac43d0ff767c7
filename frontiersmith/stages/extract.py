"""Stage ``extract``: seeds' open-ended formulations (pure logic in ``engine/formulation.py``).
One step asks for the action's seed and the next seeds the round's proposals need, side by
side."""

from __future__ import annotations

from evolution.llm import fanout, mark_unparsable
from evolution.models import Problem

from ..engine import formulation, prompts
from ..models import SeedFormulation
from .common import (
    Action,
    Ctx,
    fan_out_calls,
    proposal_of,
    proposals_waiting,
    raise_first,
    stable_id,
)


def _batch(ctx: Ctx, action: Action) -> list[Problem]:
    pids = [action.problem_id]
    rnd = ctx.fc.rounds.filter(number=ctx.fc.current_round).first()
    if rnd is not None:
        have = set(ctx.fc.formulations.values_list("problem_id", flat=True))
        for index in proposals_waiting(ctx, rnd):
            pid, _ = proposal_of(rnd.pool, index)
            if pid not in have and pid not in pids:
                pids.append(pid)
            if len(pids) >= fanout.step_calls(ctx.mutator_width()):
                break
    problems = Problem.objects.in_bulk(pids)
    return [problems[pid] for pid in pids]


def _ask(ctx: Ctx, problem: Problem):
    template = prompts.load("extract")
    return ctx.chat(
        template.role,
        template.messages(statement=problem.statement),
        template,
        key=f"extract={stable_id(problem)}",
        temperature=ctx.settings.mutation_temperature,
    )


def _extract(ctx: Ctx, action: Action) -> None:
    problems = _batch(ctx, action)
    outcomes = fan_out_calls([lambda p=p: _ask(ctx, p) for p in problems], ctx.mutator_width())
    for problem, outcome in zip(problems, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            continue
        content, call_id = outcome.content, outcome.call_id
        try:
            parsed = formulation.parse_formulation(content)
            fields = {**parsed.to_dict(), "error": ""}
        except formulation.ParseProblem as exc:
            mark_unparsable(call_id, str(exc))
            fields = {"error": f"formulation not extracted: {exc}"}
        SeedFormulation.objects.get_or_create(frontier=ctx.fc, problem=problem, defaults=fields)
    raise_first(outcomes)
