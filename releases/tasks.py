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
def question_run(run_id: int) -> str:
    from . import question_leaderboard

    return question_leaderboard.question_run_execute(run_id=run_id).state


def enqueue_question_run(run_id: int) -> None:
    transaction.on_commit(lambda: question_run.delay(run_id))


@shared_task(**TASK_OPTIONS)
def remeasurement_run(remeasurement_id: int) -> str:
    from . import living

    return living.remeasurement_execute(remeasurement_id=remeasurement_id).state


@shared_task(**TASK_OPTIONS)
def remeasure_scheduled() -> int:
    from . import living

    return len(living.remeasure_scheduled())


@shared_task(**TASK_OPTIONS)
def gate_evaluation_run(evaluation_id: int) -> str:
    from . import independent

    return independent.evaluation_execute(evaluation_id=evaluation_id).state


@shared_task(**TASK_OPTIONS)
def remeasurement_resend_stale() -> list[int]:
    """Beat's entry: publish again the re-measurements that stayed queued too long."""
    from . import living

    return living.remeasurement_resend_stale()
