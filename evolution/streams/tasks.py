"""The one Celery task module: every kind's steps and the campaign tick.

Tasks take ids, import the runner in their bodies and call one service. They are idempotent by
construction (tickets, leases, unique constraints), so ``acks_late`` with
``reject_on_worker_lost`` is safe: a redelivered message does the next step or nothing.

Services enqueue by task name (``runner.STEP_TASK``, ``runner.TICK_TASK``) after commit. The
older per-kind task names stay registered as aliases, so messages already sitting in a queue
when a deployment switches over still run.
"""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready

TASK_OPTIONS = {"acks_late": True, "reject_on_worker_lost": True, "ignore_result": True}


def _step(kind: str, stream_id: int, ticket: str, queue: str) -> str:
    from evolution.streams import runner

    report = runner.advance(
        kind=kind, stream_id=stream_id, ticket=ticket, queue=queue, schedule=True
    )
    return report.outcome


@shared_task(name="evolution.streams.step", **TASK_OPTIONS)
def stream_step(kind: str, stream_id: int, ticket: str, queue: str = "default") -> str:
    """One step of one stream of any kind, as served from ``queue``."""
    return _step(kind, stream_id, ticket, queue)


@shared_task(name="evolution.streams.tick", **TASK_OPTIONS)
def campaign_tick(campaign_id: int, token: str | None = None) -> str:
    from evolution.streams import runner

    return runner.tick(campaign_id=campaign_id, token=token)


# --------------------------------------------------------------------------- older names


@shared_task(name="evolution.tasks.campaign_tick", **TASK_OPTIONS)
def legacy_campaign_tick(campaign_id: int, token: str | None = None) -> str:
    from evolution.streams import runner

    return runner.tick(campaign_id=campaign_id, token=token)


@shared_task(name="evolution.tasks.lineage_step", **TASK_OPTIONS)
def legacy_lineage_step(lineage_id: int, ticket: str) -> str:
    return _step("benchevolver", lineage_id, ticket, "default")


@shared_task(name="evolution.tasks.sandbox_lineage_step", **TASK_OPTIONS)
def legacy_sandbox_lineage_step(lineage_id: int, ticket: str) -> str:
    return _step("benchevolver", lineage_id, ticket, "sandbox")


@shared_task(name="reasoning.tasks.reasoning_step", **TASK_OPTIONS)
def legacy_reasoning_step(campaign_id: int, ticket: str) -> str:
    return _step("reasoning", campaign_id, ticket, "default")


@shared_task(name="xcoder.tasks.xcoder_step", **TASK_OPTIONS)
def legacy_xcoder_step(campaign_id: int, ticket: str) -> str:
    return _step("xcoder", campaign_id, ticket, "default")


@shared_task(name="evosyn.tasks.evosyn_step", **TASK_OPTIONS)
def legacy_evosyn_step(campaign_id: int, ticket: str) -> str:
    return _step("evosyn", campaign_id, ticket, "default")


@shared_task(name="frontiersmith.tasks.frontier_step", **TASK_OPTIONS)
def legacy_frontier_step(campaign_id: int, ticket: str) -> str:
    return _step("frontiersmith", campaign_id, ticket, "default")


LEGACY_TASK_NAMES = (
    "evolution.tasks.campaign_tick",
    "evolution.tasks.lineage_step",
    "evolution.tasks.sandbox_lineage_step",
    "reasoning.tasks.reasoning_step",
    "xcoder.tasks.xcoder_step",
    "evosyn.tasks.evosyn_step",
    "frontiersmith.tasks.frontier_step",
)


@worker_ready.connect
def resume_campaigns_on_worker_start(sender=None, **kwargs) -> None:
    """A worker (re)started: running campaigns get a fresh tick chain, so work held by a
    killed worker is taken over once its leases expire (nothing waits for broker redelivery)."""
    from evolution.models import Campaign
    from evolution.models.campaigns import CampaignState
    from evolution.streams import runner

    running = Campaign.objects.filter(state__in=[CampaignState.QUEUED, CampaignState.RUNNING])
    for campaign_id in running.values_list("pk", flat=True):
        runner.start_ticking(campaign_id)
