"""Thin Celery tasks: ids in, one service call. Idempotent per (run, item, sample)."""

from __future__ import annotations

from celery import shared_task
from django.db import transaction

from . import leaderboard

TASK_OPTIONS = {"acks_late": True, "reject_on_worker_lost": True, "ignore_result": True}


@shared_task(**TASK_OPTIONS)
def leaderboard_run(run_id: int) -> str:
    return leaderboard.run_execute(run_id=run_id).state


def enqueue_leaderboard_run(run_id: int) -> None:
    transaction.on_commit(lambda: leaderboard_run.delay(run_id))


@shared_task(**TASK_OPTIONS)
def remeasurement_run(remeasurement_id: int) -> str:
    from . import living

    return living.remeasurement_execute(remeasurement_id=remeasurement_id).state


@shared_task(**TASK_OPTIONS)
def remeasure_scheduled() -> int:
    from . import living

    return len(living.remeasure_scheduled())
