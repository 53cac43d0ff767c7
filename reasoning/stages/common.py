"""What every reasoning stage shares: the action, the step's context (campaign, run, settings,
model calls), the run's result log and an item's replay key."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from evolution.llm import BudgetExhausted
from evolution.models import Campaign, ModelEndpoint
from evolution.streams.context import StepContext

from ..config import ReasoningSettings
from ..engine import plan
from ..models import ReasoningCampaign, ReasoningItem, ReasoningRun, ResultLogEntry, RunStatus

log = logging.getLogger(__name__)
KIND_NAME = "reasoning"


@dataclass(frozen=True)
class Action:
    name: str  # start_run | generate | answer | judge | close_level | finished
    cell: plan.Cell | None = None
    item_id: int | None = None


@dataclass
class Ctx(StepContext):
    rc: ReasoningCampaign
    settings: ReasoningSettings
    run: ReasoningRun | None

    @property
    def campaign(self) -> Campaign:
        return self.rc.campaign

    def endpoint_for(self, role: str) -> ModelEndpoint:
        """The campaign's endpoint for ``role``; the judges (``evaluation``) are seats, each
        asked on its own endpoint."""
        rc = self.rc
        if role == "generation":
            return rc.generation_endpoint
        if role == "answering":
            return rc.answering_endpoint
        if role == "quality":  # None: the first judge
            return rc.quality_endpoint or rc.seats.order_by("position").first().endpoint
        raise LookupError(f"a reasoning campaign has no single endpoint for role {role!r}")


def load_context(campaign_id: int) -> Ctx:
    rc = ReasoningCampaign.objects.select_related("campaign").get(pk=campaign_id)
    settings = ReasoningSettings.from_dict(rc.campaign.settings)
    run = rc.runs.filter(status=RunStatus.RUNNING).first()
    return Ctx(rc=rc, settings=settings, run=run)


def log_event(rc_id: int, event: str, payload: dict, *, run=None, item=None) -> None:
    ResultLogEntry.objects.create(
        reasoning_id=rc_id, run=run, item=item, event=event, payload=payload
    )


def item_key(item: ReasoningItem) -> str:
    return (
        f"run={item.run.number};d={item.difficulty};type={item.reasoning_type};"
        f"q={item.question_index}"
    )


def raise_for_action(outcomes: list) -> None:
    """After a step that asked for its action's unit and, side by side, for the next units: the
    action's own failure (first in ``outcomes``) is the step's error, as is a spent budget. A
    failure of another unit is left to that unit's own step, where retries and giving up count
    against it."""
    for index, outcome in enumerate(outcomes):
        if isinstance(outcome, BaseException) and (
            index == 0 or isinstance(outcome, BudgetExhausted)
        ):
            raise outcome
