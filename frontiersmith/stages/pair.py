"""Stage ``pair``: pairwise judgements of sampled solutions (model-judged divergence). One step
asks for the action's candidate's missing pairs and then the next sampled candidates', side by
side; each candidate's verdicts are stored together."""

from __future__ import annotations

from django.db import transaction

from evolution.llm import fanout, mark_unparsable

from ..engine import divergence, formulation, prompts
from ..models import CandidateStage, FrontierCandidate
from .common import Action, Ctx, candidate_key, fan_out_calls, raise_first, round_candidates


def _batch(ctx: Ctx, action: Action) -> list[tuple[FrontierCandidate, int, int]]:
    n, width = ctx.settings.solutions_per_candidate, ctx.mutator_width()
    first = FrontierCandidate.objects.get(pk=action.candidate_id)
    rest = (
        round_candidates(ctx)
        .filter(stage=CandidateStage.FILTERED, decision="")
        .exclude(pk=first.pk)
        .order_by("index")
    )
    asks: list[tuple[FrontierCandidate, int, int]] = []
    for c in [first, *rest]:
        if len(c.solutions) < n:
            continue
        for i, j in divergence.pairs(n):
            if f"{i}-{j}" in c.pair_verdicts:
                continue
            if len(asks) >= fanout.step_calls(width):
                return asks
            asks.append((c, i, j))
    return asks


def _ask(ctx: Ctx, c: FrontierCandidate, i: int, j: int) -> float | None:
    if not (c.solutions[i] and c.solutions[j]):
        return None
    template = prompts.load("pair_judge")
    answer = ctx.chat(
        template.role,
        template.messages(statement=c.statement, a=c.solutions[i], b=c.solutions[j]),
        template,
        key=f"{candidate_key(c)};pair={i}-{j}",
        temperature=ctx.settings.judge_temperature,
    )
    content, call_id = answer.content, answer.call_id
    try:
        data = formulation._json(content)
        if not isinstance(data.get("different"), bool):
            raise formulation.ParseProblem("no boolean 'different'")
        return 1.0 if data["different"] else 0.0
    except formulation.ParseProblem as exc:
        mark_unparsable(call_id, str(exc))
        return None


def _pair(ctx: Ctx, action: Action) -> None:
    asks = _batch(ctx, action)
    outcomes = fan_out_calls([lambda a=a: _ask(ctx, *a) for a in asks], ctx.mutator_width())
    verdicts: dict[int, dict[str, float | None]] = {}
    for (c, i, j), outcome in zip(asks, outcomes, strict=True):
        if not isinstance(outcome, BaseException):
            verdicts.setdefault(c.pk, {})[f"{i}-{j}"] = outcome
    for pk, found in verdicts.items():
        with transaction.atomic():
            row = FrontierCandidate.objects.select_for_update().get(pk=pk)
            row.pair_verdicts = {**row.pair_verdicts, **found}
            row.save(update_fields=["pair_verdicts", "updated_at"])
    raise_first(outcomes)
