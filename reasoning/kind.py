"""The reasoning loop's declared graph (document 004, section 11).

One stream per campaign (``ReasoningCampaign``): every question is conditioned on the ones
before it, so steps run one at a time. Units are items (the document's ExampleResult): generated,
answered, judged; a cell without an acceptable question is filtered; an item a model keeps
failing on is given up as ``error`` and the run goes on without its score.
"""

from __future__ import annotations

from django.db.models import Q

from evolution.models import Campaign
from evolution.streams.kinds import (
    GIVE_UP_REASON,
    NEW,
    Kind,
    Stage,
    register,
    unit_created,
    unit_transition,
)

from . import services
from .config import ReasoningSettings
from .models import ItemStatus, ReasoningCampaign, ReasoningItem

S = ItemStatus


def next_action(ctx: services.Ctx):
    action = services.next_action(ctx)
    return None if action.name == "finished" else action


def give_up(ctx: services.Ctx, action: services.Action, reason: str) -> bool:
    if action.item_id:
        unit_transition(
            KIND,
            ReasoningItem.objects.filter(pk=action.item_id),
            source=(S.GENERATED, S.ANSWERED),
            target=S.ERROR,
            status_reason=reason,
        )
        return True
    if action.name == "generate" and action.cell is not None:
        fresh = services._load(ctx.rc.pk)
        if fresh.run is not None:
            services._item_create(
                fresh, action.cell, status=unit_created(KIND, S.ERROR), status_reason=reason
            )
        return True
    return False  # starting or closing a run: no item to give up on


def finished(campaign: Campaign) -> bool:
    rc = ReasoningCampaign.objects.get(pk=campaign.pk)
    return services.work_finished(rc, ReasoningSettings.from_dict(campaign.settings))


A = services.ACTIONS

KIND = register(
    Kind(
        name="reasoning",
        label="Reasoning questions",
        stream_model=ReasoningCampaign,
        unit_model=ReasoningItem,
        unit_state_field="status",
        states=tuple(S.values),
        edges=(
            (NEW, S.GENERATED),
            (NEW, S.FILTERED),
            (NEW, S.ERROR),
            (S.GENERATED, S.ANSWERED),
            (S.ANSWERED, S.JUDGED),
            (S.GENERATED, S.ERROR),
            (S.ANSWERED, S.ERROR),
        ),
        stages=(
            Stage("start_run", A["start_run"]),
            Stage("generate", A["generate"]),
            Stage("answer", A["answer"]),
            Stage("judge", A["judge"]),
            Stage("close_level", A["close_level"]),
        ),
        load=services._load,
        next_action=next_action,
        give_up=give_up,
        unit_of=lambda action: action.item_id,
        given_up=Q(status=S.ERROR, status_reason__regex=GIVE_UP_REASON),
        finished=finished,
        completed_reason="all runs finished",
    )
)
