"""Stage ``extract``: the features of the seeds' reference solutions (pure logic in
``engine/features.py``). One step asks for the next seeds still to extract, as many side by
side as the generator endpoint takes; each seed's answer is stored on its own."""

from __future__ import annotations

from django.db import transaction

from evolution.llm import fanout, mark_unparsable
from evolution.llm.parsing import ParseError
from evolution.models import Problem

from ..engine import features as feat
from ..engine import prompts
from ..models import ExtractionStatus, FeatureExtraction
from .common import Action, Ctx, fan_out_calls, raise_first, seed_key, seed_problems


def _batch(ctx: Ctx, action: Action) -> list[Problem]:
    """The action's seed, then the next seeds without an extraction (in seed order)."""
    done = set(FeatureExtraction.objects.filter(xcoder=ctx.xc).values_list("problem_id", flat=True))
    waiting = [p for p in seed_problems(ctx.campaign) if p.pk not in done]
    first = next((p for p in waiting if p.pk == action.problem_id), None)
    if first is None:
        first = Problem.objects.get(pk=action.problem_id)
    rest = [p for p in waiting if p.pk != first.pk]
    return [first, *rest][: fanout.step_calls(ctx.generator_width())]


def _ask(ctx: Ctx, problem: Problem):
    messages, template = prompts.extraction_messages(
        statement=problem.statement, code=problem.reference_solution
    )
    return ctx.chat(
        "xcoder_extract",
        messages,
        template,
        key=f"extract;seed={seed_key(problem)}",
    )


def act_extract(ctx: Ctx, action: Action) -> None:
    seeds = _batch(ctx, action)
    outcomes = fan_out_calls([lambda p=p: _ask(ctx, p) for p in seeds], ctx.generator_width())
    for problem, result in zip(seeds, outcomes, strict=True):
        if isinstance(result, BaseException):
            continue
        try:
            data = feat.parse_extraction(result.content)
            row = {"status": ExtractionStatus.OK, "features": data}
        except ParseError as exc:
            mark_unparsable(result.call_id, str(exc))
            row = {"status": ExtractionStatus.FAILED, "reason": f"unparsable: {exc}"[:500]}
        with transaction.atomic():
            FeatureExtraction.objects.get_or_create(xcoder=ctx.xc, problem=problem, defaults=row)
    raise_first(outcomes)
