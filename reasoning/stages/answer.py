"""Stage ``answer``: the target model answers one generated question."""

from __future__ import annotations

from django.utils import timezone

from evolution.streams.kinds import unit_transition

from ..engine import prompts
from ..models import ItemStatus, ReasoningItem
from .common import KIND_NAME, Action, Ctx, _item_key


def _answer(ctx: Ctx, action: Action) -> None:
    item = ReasoningItem.objects.select_related("run").get(pk=action.item_id)
    template = prompts.load("answering")
    result = ctx.chat(
        ctx.rc.answering_endpoint,
        prompts.answering_messages(question=item.question),
        role="answering",
        template=template,
        key=_item_key(item),
        temperature=ctx.settings.answering_temperature,
        max_tokens=ctx.settings.answering_max_tokens,
    )
    unit_transition(
        KIND_NAME,
        ReasoningItem.objects.filter(pk=item.pk),
        source=ItemStatus.GENERATED,
        target=ItemStatus.ANSWERED,
        answer=result.content,
        answered_at=timezone.now(),
    )
