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
    register,
    stages_of,
    unit_created,
    unit_transition,
)

from .config import ReasoningSettings
from .engine import plan
from .models import ItemStatus, ReasoningCampaign, ReasoningItem, RunStatus
from .stages import answer, close_level, generate, judge, start_run
from .stages import state as series_state
from .stages.common import Action, Ctx, load_context

S = ItemStatus


def work_finished(rc: ReasoningCampaign, settings: ReasoningSettings) -> bool:
    """The campaign ran its own ``runs`` (``run_count`` counts the whole series')."""
    return (
        series_state.runs_done(rc) >= settings.runs
        and not rc.runs.filter(status=RunStatus.RUNNING).exists()
    )


def action_for(ctx: Ctx) -> Action:
    """The next thing to do, from the rows alone (so a rerun after a crash picks up here)."""
    run = ctx.run
    if run is None:
        if series_state.runs_done(ctx.rc) >= ctx.settings.runs:
            return Action("finished")
        return Action("start_run")
    difficulty = ctx.rc.current_difficulty
    items = {
        (i.reasoning_type, i.question_index): i
        for i in run.items.filter(difficulty=difficulty).only(
            "id", "reasoning_type", "question_index", "status"
        )
    }
    for cell in plan.level_cells(difficulty, run.plan):
        item = items.get((cell.reasoning_type, cell.question_index))
        if item is None:
            return Action("generate", cell=cell)
        if item.status == ItemStatus.GENERATED:
            return Action("answer", item_id=item.pk)
        if item.status == ItemStatus.ANSWERED:
            return Action("judge", item_id=item.pk)
    return Action("close_level")


def next_action(ctx: Ctx):
    action = action_for(ctx)
    return None if action.name == "finished" else action


def give_up(ctx: Ctx, action: Action, reason: str) -> bool:
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
        fresh = load_context(ctx.rc.pk)
        if fresh.run is not None:
            generate._item_create(
                fresh, action.cell, status=unit_created(KIND, S.ERROR), status_reason=reason
            )
        return True
    return False  # starting or closing a run: no item to give up on


def unit_of(action: Action):
    """The item an action works on: its id once it exists; for ``generate``, which creates
    the items of a level's cells in one step (and gives up on its first cell's), that cell."""
    if action.item_id:
        return action.item_id
    if action.name == "generate" and action.cell is not None:
        return ("cell", action.cell.reasoning_type, action.cell.question_index)
    return None


def finished(campaign: Campaign) -> bool:
    rc = ReasoningCampaign.objects.get(pk=campaign.pk)
    return work_finished(rc, ReasoningSettings.from_dict(campaign.settings))


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
        stages=stages_of(start_run, generate, answer, judge, close_level),
        load=load_context,
        next_action=next_action,
        give_up=give_up,
        unit_of=unit_of,
        given_up=Q(status=S.ERROR, status_reason__regex=GIVE_UP_REASON),
        finished=finished,
        completed_reason="all runs finished",
    )
)
