"""Thin Celery tasks: they take ids and call one service. Idempotent by construction (a ticket,
a lease and unique constraints), so acks_late with reject_on_worker_lost is safe."""

from __future__ import annotations

from celery import shared_task
from django.db import transaction

from . import services

TASK_OPTIONS = {"acks_late": True, "reject_on_worker_lost": True, "ignore_result": True}


@shared_task(**TASK_OPTIONS)
def frontier_step(campaign_id: int, ticket: str) -> str:
    return services.frontier_advance(campaign_id=campaign_id, ticket=ticket, schedule=True).outcome


def enqueue_step(campaign_id: int, ticket: str | None) -> None:
    if not ticket:
        return
    transaction.on_commit(lambda: frontier_step.apply_async((campaign_id, ticket), queue="default"))
