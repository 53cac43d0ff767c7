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
