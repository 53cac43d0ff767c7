"""What every EvoSyn stage shares: the action, the step's context (campaign, settings, model calls,
sandbox limits), the campaign's sandbox-execution budget, and an instance's replay key."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db.models import F

from evolution import sandbox
from evolution.llm import (
    BudgetExhausted,
    LLMError,
    ParseError,
    fanout,
    mark_unparsable,
)
from evolution.models import Campaign
from evolution.streams.context import StepContext

from ..config import EvoSynSettings
from ..models import EvoSynCampaign, Instance, InstanceRole, InstanceStatus

log = logging.getLogger(__name__)
METHOD = KIND_NAME = "evosyn"


class SandboxBudgetReached(Exception):
    """The campaign's sandbox cost budget would be exceeded by the next execution batch."""


@dataclass(frozen=True)
class Action:
    name: str  # solve | write_tests | execute | evolve | synthesize | filter | finished
    instance_id: int | None = None
    number: int | None = None  # the iteration (evolve) or slot (synthesize)


@dataclass
class Ctx(StepContext):
    esc: EvoSynCampaign
    settings: EvoSynSettings

    @property
    def campaign(self) -> Campaign:
        return self.esc.campaign

    @property
    def limits(self) -> sandbox.Limits:
        return sandbox.Limits(
            time_s=self.settings.execution_time_s, memory_mb=self.settings.memory_mb
        )

    @property
    def strategy_limits(self) -> sandbox.Limits:
        return sandbox.Limits(
            time_s=self.settings.strategy_time_s, memory_mb=self.settings.memory_mb
        )


def ask_program(
    ctx: Ctx, role: str, messages, template, *, key: str, temperature: float, parse
) -> tuple[str, str, int | None]:
    """Ask ``role`` for a program, ``parse(answer) -> code``: (code, error, call id). An
    unparsable answer (marked so) or a failed call is an error with no code, kept with what it
    made; only the budget running out is raised."""
    code, error, call_id = "", "", None
    try:
        answer = ctx.chat(role, messages, template, key=key, temperature=temperature)
        call_id = answer.call_id
        code = parse(answer.content)
    except ParseError as exc:
        error = f"unparsable answer: {exc}"
        mark_unparsable(call_id, str(exc))
    except BudgetExhausted:
        raise
    except LLMError as exc:
        error = f"model call failed: {exc}"[:1000]
    return code, error, call_id


def width_for(ctx: Ctx, role: str) -> int:
    """Parallel calls for ``role`` (the fan-out setting and its endpoint's limit)."""
    return fanout.width_for(ctx.endpoint_for(role))


def pending_like(ctx: Ctx, inst: Instance):
    """The other pending instances of ``inst``'s role, in the kind's order: the ones a step may
    take along with ``inst`` when they wait for the same stage."""
    return (
        ctx.esc.instances.filter(role=inst.role, status=InstanceStatus.PENDING)
        .exclude(pk=inst.pk)
        .select_related("problem")
        .order_by("slot")
    )


def load_context(campaign_id: int) -> Ctx:
    esc = EvoSynCampaign.objects.select_related("campaign", "campaign__evolver").get(pk=campaign_id)
    return Ctx(esc=esc, settings=EvoSynSettings.from_dict(esc.campaign.settings))


def reserve_executions(ctx: Ctx, executions: int) -> None:
    """Raise SandboxBudgetReached before a batch that would overspend the campaign's budget."""
    used = EvoSynCampaign.objects.values_list("sandbox_executions", flat=True).get(pk=ctx.esc.pk)
    if used + executions > ctx.settings.max_sandbox_executions:
        raise SandboxBudgetReached(
            f"sandbox executions: {used} used, {executions} more needed, "
            f"budget {ctx.settings.max_sandbox_executions}"
        )


def spend_executions(ctx: Ctx, executions: int) -> None:
    if executions:
        EvoSynCampaign.objects.filter(pk=ctx.esc.pk).update(
            sandbox_executions=F("sandbox_executions") + executions
        )


def instance_key(inst: Instance) -> str:
    origin = inst.problem.origin_id or inst.problem.public_id
    if inst.role == InstanceRole.SEED:
        return f"seed={origin}"
    return f"synth={inst.slot}"
