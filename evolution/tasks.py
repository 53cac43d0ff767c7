"""Thin Celery tasks: they take ids, re-read the rows, and call one service.

Idempotent by construction (tickets, leases, unique constraints), so acks_late with
reject_on_worker_lost is safe: a redelivered message either does the next step or nothing.
"""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready
from django.db import transaction

from .sandbox import tasks as sandbox_tasks  # noqa: F401 - registers sandbox_judge_chunk
from .services import campaigns as campaign_services
from .services import steps

TASK_OPTIONS = {"acks_late": True, "reject_on_worker_lost": True, "ignore_result": True}


@shared_task(**TASK_OPTIONS)
def campaign_tick(campaign_id: int, token: str | None = None) -> str:
    return campaign_services.campaign_tick(campaign_id=campaign_id, token=token)


@shared_task(**TASK_OPTIONS)
def lineage_step(lineage_id: int, ticket: str) -> str:
    return steps.lineage_advance(lineage_id=lineage_id, ticket=ticket, queue=steps.DEFAULT).outcome


@shared_task(**TASK_OPTIONS)
def sandbox_lineage_step(lineage_id: int, ticket: str) -> str:
    """Execution-bound steps (materialize, validate, judge attempts) on the ``sandbox`` queue."""
    return steps.lineage_advance(lineage_id=lineage_id, ticket=ticket, queue=steps.SANDBOX).outcome


def enqueue_lineage_step(lineage_id: int, ticket: str | None, *, queue: str) -> None:
    if not ticket:
        return
    task = sandbox_lineage_step if queue == steps.SANDBOX else lineage_step
    transaction.on_commit(lambda: task.apply_async((lineage_id, ticket), queue=queue))


def enqueue_campaign_tick(campaign_id: int) -> None:
    """A one-off tick: it does its work but does not continue a chain ("" matches no token)."""
    transaction.on_commit(lambda: campaign_tick.apply_async((campaign_id, "")))


@worker_ready.connect
def resume_campaigns_on_worker_start(sender=None, **kwargs) -> None:
    """A worker (re)started: running campaigns get a fresh tick chain, so work held by a
    killed worker is taken over once its leases expire (nothing waits for broker redelivery)."""
    from .models import Campaign
    from .models.campaigns import CampaignState

    running = Campaign.objects.filter(state__in=[CampaignState.QUEUED, CampaignState.RUNNING])
    for campaign_id in running.values_list("pk", flat=True):
        campaign_services.campaign_start_ticking(campaign_id=campaign_id)
