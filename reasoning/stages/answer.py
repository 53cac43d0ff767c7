"""Stage ``answer``: the target model answers generated questions. Answers depend on nothing but
their question, so one step answers the action's item and, side by side, the level's other
generated items (up to the step's calls, ``fanout.step_calls``), stored in the level's order."""

from __future__ import annotations

from django.utils import timezone

from evolution.llm import fanout
from evolution.streams.kinds import unit_transition

from ..engine import prompts
from ..models import ItemStatus, ReasoningItem
from .common import KIND_NAME, Action, Ctx, item_key, raise_for_action


def _items(ctx: Ctx, action: Action, width: int) -> list[ReasoningItem]:
    item = ReasoningItem.objects.select_related("run").get(pk=action.item_id)
    others = (
        ReasoningItem.objects.select_related("run")
        .filter(run=item.run, difficulty=item.difficulty, status=ItemStatus.GENERATED)
        .exclude(pk=item.pk)
        .order_by("position")
    )
    return [item, *others[: fanout.step_calls(width) - 1]]


def _answer(ctx: Ctx, action: Action) -> None:
    items = _items(ctx, action, fanout.width_for(ctx.rc.answering_endpoint))
    raise_for_action(answer_items(ctx, items))


def ask(ctx: Ctx, question: str, key: str):
    """The target model's answer to ``question`` (``key``: the item's replay key)."""
    return ctx.chat(
        "answering",
        prompts.answering_messages(question=question),
        prompts.load("answering"),
        key=key,
        temperature=ctx.settings.answering_temperature,
        max_tokens=ctx.settings.answering_max_tokens,
    )


def store(item: ReasoningItem, result) -> None:
    unit_transition(
        KIND_NAME,
        ReasoningItem.objects.filter(pk=item.pk),
        source=ItemStatus.GENERATED,
        target=ItemStatus.ANSWERED,
        answer=result.content,
        answered_at=timezone.now(),
    )


def answer_items(ctx: Ctx, items: list[ReasoningItem]) -> list:
    """Answer ``items`` side by side and store the answers in their order; returns each call's
    outcome (its failure in its place)."""
    width = fanout.width_for(ctx.rc.answering_endpoint)
    outcomes = fanout.fan_out(
        [lambda i=i: ask(ctx, i.question, item_key(i)) for i in items],
        width,
        return_exceptions=True,
    )
    for item, result in zip(items, outcomes, strict=True):
        if not isinstance(result, BaseException):
            store(item, result)
    return outcomes
