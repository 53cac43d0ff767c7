"""Stage ``extract``: a seed's open-ended formulation (pure logic in ``engine/formulation.py``)."""

from __future__ import annotations

from evolution.llm import mark_unparsable
from evolution.models import Problem

from ..engine import formulation, prompts
from ..models import SeedFormulation
from .common import Action, Ctx, stable_id


def _extract(ctx: Ctx, action: Action) -> None:
    problem = Problem.objects.get(pk=action.problem_id)
    template = prompts.load("extract")
    content, call_id = ctx.chat(
        ctx.fc.mutator_endpoint,
        template.messages(statement=problem.statement),
        template=template,
        key=f"extract={stable_id(problem)}",
        temperature=ctx.settings.mutation_temperature,
    )
    try:
        parsed = formulation.parse_formulation(content)
        fields = {**parsed.to_dict(), "error": ""}
    except formulation.ParseProblem as exc:
        mark_unparsable(call_id, str(exc))
        fields = {"error": f"formulation not extracted: {exc}"}
    SeedFormulation.objects.get_or_create(frontier=ctx.fc, problem=problem, defaults=fields)
