"""Stage ``pair``: one pairwise judgement of two sampled solutions (model-judged divergence)."""

from __future__ import annotations

from django.db import transaction

from evolution.llm import mark_unparsable

from ..engine import divergence, formulation, prompts
from ..models import FrontierCandidate
from .common import Action, Ctx, _key


def _pair(ctx: Ctx, action: Action) -> None:
    c = FrontierCandidate.objects.get(pk=action.candidate_id)
    i, j = next(
        (i, j)
        for i, j in divergence.pairs(ctx.settings.solutions_per_candidate)
        if f"{i}-{j}" not in c.pair_verdicts
    )
    value = None
    if c.solutions[i] and c.solutions[j]:
        template = prompts.load("pair_judge")
        content, call_id = ctx.chat(
            ctx.fc.mutator_endpoint,
            template.messages(statement=c.statement, a=c.solutions[i], b=c.solutions[j]),
            template=template,
            key=f"{_key(c)};pair={i}-{j}",
            temperature=ctx.settings.judge_temperature,
        )
        try:
            data = formulation._json(content)
            if not isinstance(data.get("different"), bool):
                raise formulation.ParseProblem("no boolean 'different'")
            value = 1.0 if data["different"] else 0.0
        except formulation.ParseProblem as exc:
            mark_unparsable(call_id, str(exc))
    with transaction.atomic():
        row = FrontierCandidate.objects.select_for_update().get(pk=c.pk)
        row.pair_verdicts = {**row.pair_verdicts, f"{i}-{j}": value}
        row.save(update_fields=["pair_verdicts", "updated_at"])
