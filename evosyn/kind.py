"""EvoSyn's declared graph (paper 002): evolve a test-selection strategy, then synthesize.

One stream per campaign (``EvoSynCampaign``): the strategy is evolved on the seeds' matrices
before synthetic problems are filtered with it. Units are instances (seeds and synthetic
problems): pending while solutions and tests are collected, ready once the matrix is computed,
then kept or pruned (synthetic) or unusable (seed). An instance a step keeps failing on is given
up (a seed as unusable, a synthetic problem as pruned). The sandbox-execution budget pauses the
campaign like the call budget.
"""

from __future__ import annotations

from django.db.models import Q

from evolution.models import Campaign
from evolution.streams.kinds import GIVE_UP_REASON, NEW, Kind, Stage, register, unit_transition

from . import services
from .models import EvoSynCampaign, Instance, InstanceRole, InstanceStatus

St = InstanceStatus


def next_action(ctx: services.Ctx):
    action = services.next_action(ctx)
    return None if action.name == "finished" else action


def give_up(ctx: services.Ctx, action: services.Action, reason: str) -> bool:
    if not action.instance_id:
        return False  # evolving or synthesizing: no item to give up on
    inst = Instance.objects.get(pk=action.instance_id)
    unit_transition(
        KIND,
        Instance.objects.filter(pk=inst.pk),
        source=(St.PENDING, St.READY),
        target=St.UNUSABLE if inst.role == InstanceRole.SEED else St.PRUNED,
        status_reason=reason,
    )
    return True


def finished(campaign: Campaign) -> bool:
    return services.work_finished(campaign.pk)


A = services.ACTIONS

KIND = register(
    Kind(
        name="evosyn",
        label="EvoSyn",
        stream_model=EvoSynCampaign,
        unit_model=Instance,
        unit_state_field="status",
        states=tuple(St.values),
        edges=(
            (NEW, St.PENDING),
            (NEW, St.PRUNED),  # a synthesized problem that could not be parsed
            (St.PENDING, St.READY),
            (St.PENDING, St.UNUSABLE),
            (St.PENDING, St.PRUNED),
            (St.READY, St.KEPT),
            (St.READY, St.PRUNED),
            (St.READY, St.UNUSABLE),
        ),
        stages=(
            Stage("solve", A["solve"]),
            Stage("write_tests", A["write_tests"]),
            Stage("execute", A["execute"]),
            Stage("evolve", A["evolve"]),
            Stage("synthesize", A["synthesize"]),
            Stage("filter", A["filter"]),
        ),
        load=services._load,
        next_action=next_action,
        give_up=give_up,
        unit_of=lambda action: action.instance_id,
        given_up=Q(status__in=(St.UNUSABLE, St.PRUNED), status_reason__regex=GIVE_UP_REASON),
        finished=finished,
        budget_errors=(services.SandboxBudgetReached,),
    )
)
