"""Stage ``judge``: the judges score one answer (pure logic in ``engine/judging.py``)."""

from __future__ import annotations

from django.utils import timezone

from evolution.llm import fanout, mark_unparsable
from evolution.streams.kinds import unit_transition

from ..engine import judging, prompts
from ..models import ItemStatus, ReasoningItem
from .common import KIND_NAME, Action, Ctx, item_key, log_event, raise_for_action


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


def _items(item: ReasoningItem, per_step: int) -> list[ReasoningItem]:
    """``item``, then the level's next answered items, in the level's order and with
    no cell between them still waiting for its question or answer: the run's log then lists
    the scored items in the order one cell after the other gives."""
    items = [ReasoningItem.objects.select_related("run").get(pk=item.pk)]
    later = (
        ReasoningItem.objects.select_related("run")
        .filter(run=item.run, difficulty=item.difficulty, position__gt=item.position)
        .order_by("position")
    )
    expected = item.position + 1
    for other in later:
        if len(items) >= per_step or other.position != expected:
            break  # a cell between them has no item yet
        expected += 1
        if other.status == ItemStatus.GENERATED:
            break
        if other.status == ItemStatus.ANSWERED:
            items.append(other)
    return items


def _judge(ctx: Ctx, action: Action) -> None:
    raise_for_action(
        judge_from(ctx, ReasoningItem.objects.select_related("run").get(pk=action.item_id))
    )


def judge_from(ctx: Ctx, item: ReasoningItem) -> list:
    """The panel's judges score the answered ``item`` and the level's next answered items
    (``_items``), every (item, seat) call side by side (the fan-out setting, their endpoints'
    limits); each item's verdicts are kept in seat order and the items are scored in the
    level's order."""
    seats = list(ctx.rc.seats.select_related("endpoint").order_by("position"))
    width = fanout.width_for(*(seat.endpoint for seat in seats))
    items = _items(item, max(1, fanout.step_calls(width) // max(1, len(seats))))

    def ask(one: ReasoningItem, seat):
        return ask_seat(
            ctx,
            seat,
            key=item_key(one),
            reasoning_type=one.reasoning_type,
            difficulty=one.difficulty,
            question=one.question,
            answer=one.answer,
        )

    outcomes = fanout.fan_out(
        [lambda i=i, seat=seat: ask(i, seat) for i in items for seat in seats],
        width,
        return_exceptions=True,
    )
    per_item = [outcomes[k * len(seats) : (k + 1) * len(seats)] for k in range(len(items))]
    for one, results in zip(items, per_item, strict=True):
        if any(isinstance(r, BaseException) for r in results):
            break  # the later items wait: the log keeps the level's order
        score(ctx, one, seats, results)
    # The first item's failure first (``common.raise_for_action``), then every call's.
    own = next((r for r in per_item[0] if isinstance(r, BaseException)), None)
    return [own, *outcomes[len(seats) :]]


def ask_seat(ctx: Ctx, seat, *, key: str, reasoning_type, difficulty, question, answer):
    """One seat's verdict call on an answer (``key``: the item's replay key)."""
    return ctx.chat(
        "evaluation",
        prompts.evaluation_messages(
            reasoning_type=reasoning_type, difficulty=difficulty, question=question, answer=answer
        ),
        prompts.load("evaluation"),
        endpoint=seat.endpoint,
        key=f"{key};judge={seat.position}",
        temperature=ctx.settings.evaluation_temperature,
        max_tokens=ctx.settings.evaluation_max_tokens,
    )


def score(ctx: Ctx, item: ReasoningItem, seats, results) -> None:
    """The item's verdicts (in seat order) aggregated and stored; the score is logged."""
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
        log_event(ctx.rc.pk, "item_scored", example_result(item), run=item.run, item=item)
