"""X-Coder's declared graph (paper 001): grow a feature tree, then synthesize tasks from it.

One stream per campaign (``XcoderCampaign``): the tree is extracted, merged and evolved before
tasks are sampled from it. Units are synthesis tasks: planned, selected (stage 1), written
(stage 2), tested, solved, then accepted or discarded by dual verification; a statement gate may
reject a task on the way; a task a step keeps failing on is given up as ``error``. An extraction
or evolution step that keeps failing is recorded as failed and the tree grows without it.
"""

from __future__ import annotations

from django.db.models import Q

from evolution.models import Campaign
from evolution.streams.kinds import GIVE_UP_REASON, NEW, Kind, Stage, register, unit_transition

from . import services
from .models import (
    TERMINAL_TASK_STATES,
    EvolutionStep,
    ExtractionStatus,
    FeatureExtraction,
    SynthTask,
    TaskStatus,
    XcoderCampaign,
)

T = TaskStatus
OPEN = (T.PLANNED, T.SELECTED, T.WRITTEN, T.TESTED, T.SOLVED)


def next_action(ctx: services.Ctx):
    action = services.next_action(ctx)
    return None if action.name == "finished" else action


def give_up(ctx: services.Ctx, action: services.Action, reason: str) -> bool:
    reason = reason[:500]
    if action.task_id:
        unit_transition(
            KIND,
            SynthTask.objects.filter(pk=action.task_id).exclude(status__in=TERMINAL_TASK_STATES),
            source=OPEN,
            target=T.ERROR,
            reason_code="error",
            reason=reason,
        )
        return True
    if action.name == "extract":
        FeatureExtraction.objects.get_or_create(
            xcoder_id=ctx.xc.pk,
            problem_id=action.problem_id,
            defaults={"status": ExtractionStatus.FAILED, "reason": reason},
        )
        return True
    if action.name == "evolve":
        EvolutionStep.objects.get_or_create(
            xcoder_id=ctx.xc.pk,
            round=action.round,
            category=action.category,
            defaults={"status": ExtractionStatus.FAILED, "reason": reason},
        )
        return True
    return False  # merging, closing the tree, planning: no item to give up on


def finished(campaign: Campaign) -> bool:
    return services.work_finished(services._load(campaign.pk))


A = services.ACTIONS

KIND = register(
    Kind(
        name="xcoder",
        label="X-Coder",
        stream_model=XcoderCampaign,
        unit_model=SynthTask,
        unit_state_field="status",
        states=tuple(T.values),
        edges=(
            (NEW, T.PLANNED),
            (NEW, T.REJECTED),  # the sampled tree is too small
            (T.PLANNED, T.SELECTED),
            (T.SELECTED, T.WRITTEN),
            (T.WRITTEN, T.TESTED),
            (T.TESTED, T.SOLVED),
            (T.SOLVED, T.ACCEPTED),
            (T.SOLVED, T.DISCARDED),
            *((s, T.REJECTED) for s in (T.PLANNED, T.SELECTED, T.WRITTEN)),
            *((s, T.ERROR) for s in OPEN),
        ),
        stages=(
            Stage("extract", A["extract"]),
            Stage("merge", A["merge"]),
            Stage("evolve", A["evolve"]),
            Stage("close_tree", A["close_tree"]),
            Stage("plan", A["plan"]),
            Stage("select", A["select"]),
            Stage("write", A["write"]),
            Stage("tests", A["tests"]),
            Stage("solve", A["solve"]),
            Stage("verify", A["verify"]),
        ),
        load=services._load,
        next_action=next_action,
        give_up=give_up,
        unit_of=lambda action: action.task_id,
        given_up=Q(status=T.ERROR, reason__regex=GIVE_UP_REASON),
        finished=finished,
    )
)
