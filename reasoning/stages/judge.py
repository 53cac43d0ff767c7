"""Stage ``judge``: the judges score one answer (pure logic in ``engine/judging.py``)."""

from __future__ import annotations

from django.utils import timezone

from evolution.llm import fanout, mark_unparsable
from evolution.streams.kinds import unit_transition

from ..engine import judging, prompts
from ..models import ItemStatus, ReasoningItem
from .common import KIND_NAME, Action, Ctx, _item_key, _log


def example_result(item: ReasoningItem) -> dict:
    """The document's ExampleResult (section 6.2), plus how the score came about."""
    return {
        "question": item.question,
        "tags": {
            "reasoning_type": item.reasoning_type,
            "difficulty": item.difficulty,
            "question_index": item.question_index,
        },
        "answer": item.answer,
        "score": item.score,
        "rationale": item.rationale,
        "created_at": item.created_at.isoformat(),
        "run": item.run.number,
        "judge_score": item.judge_score,
        "parse_failures": item.parse_failures,
        "disagreement": item.disagreement,
        "similarity": item.similarity,
        "regenerations": item.regenerations,
    }


def _judge(ctx: Ctx, action: Action) -> None:
    item = ReasoningItem.objects.select_related("run").get(pk=action.item_id)
    template = prompts.load("evaluation")
    messages = prompts.evaluation_messages(
        reasoning_type=item.reasoning_type,
        difficulty=item.difficulty,
        question=item.question,
        answer=item.answer,
    )
    seats = list(ctx.rc.seats.select_related("endpoint").order_by("position"))

    def ask(seat):
        return ctx.chat(
            seat.endpoint,
            messages,
            role="evaluation",
            template=template,
            key=f"{_item_key(item)};judge={seat.position}",
            temperature=ctx.settings.evaluation_temperature,
            max_tokens=ctx.settings.evaluation_max_tokens,
        )

    # The panel's judges are asked side by side (fan-out setting, their endpoints' limits);
    # their verdicts are kept in seat order.
    results = fanout.fan_out(
        [lambda seat=seat: ask(seat) for seat in seats],
        fanout.width_for(*(seat.endpoint for seat in seats)),
    )
    verdicts = []
    for seat, result in zip(seats, results, strict=True):
        verdict = judging.parse_verdict(result.content, judge=seat.endpoint.name)
        if verdict.parse_failure:
            mark_unparsable(result.call_id, verdict.reason)
        verdicts.append(verdict)
    agg = judging.aggregate(verdicts, ctx.settings.judge_aggregation)
    now = timezone.now()
    updated = unit_transition(
        KIND_NAME,
        ReasoningItem.objects.filter(pk=item.pk),
        source=ItemStatus.ANSWERED,
        target=ItemStatus.JUDGED,
        judge_score=agg.score,
        rationale=agg.rationale,
        verdicts=[v.to_dict() for v in verdicts],
        parse_failures=agg.parse_failures,
        disagreement=agg.disagreement,
        judged_at=now,
    )
    if updated:
        item.refresh_from_db()
        _log(ctx.rc.pk, "item_scored", example_result(item), run=item.run, item=item)
