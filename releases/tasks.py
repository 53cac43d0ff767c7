"""Thin Celery tasks: ids in, one service call. Idempotent per (run, item, sample)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import transaction

from . import leaderboard

log = logging.getLogger(__name__)
TASK_OPTIONS = {"acks_late": True, "reject_on_worker_lost": True, "ignore_result": True}


@shared_task(**TASK_OPTIONS)
def leaderboard_run(run_id: int) -> str:
    return leaderboard.run_execute(run_id=run_id).state


def _send_leaderboard_run(run_id: int) -> None:
    from evolution import jobs

    from .models import LeaderboardRun

    leaderboard_run.delay(run_id)
    jobs.note_sent(LeaderboardRun, run_id)


def enqueue_leaderboard_run(run_id: int) -> None:
    """Send the run's task on commit. If the publish fails, the row stays queued and the
    job supervisor sends it again (``releases.jobs``)."""
    transaction.on_commit(lambda: _send_leaderboard_run(run_id))


@shared_task(**TASK_OPTIONS)
def question_run(run_id: int) -> str:
    from .leaderboard import questions as question_leaderboard

    return question_leaderboard.question_run_execute(run_id=run_id).state


def _send_question_run(run_id: int) -> None:
    from evolution import jobs

    from .models import QuestionRun

    question_run.delay(run_id)
    jobs.note_sent(QuestionRun, run_id)


def enqueue_question_run(run_id: int) -> None:
    """Send the run's task on commit; a lost message is sent again by the job supervisor."""
    transaction.on_commit(lambda: _send_question_run(run_id))


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


# The names beat sent before the job supervisor became the platform's (``evolution.jobs.
# supervise``), kept while a message under them may still be queued: each runs one pass of the
# one supervisor, which also re-sends the re-measurements left queued.
@shared_task(**TASK_OPTIONS)
def supervise_jobs() -> dict:
    from evolution.tasks import supervise_jobs as supervise

    return supervise()


@shared_task(**TASK_OPTIONS)
def remeasurement_resend_stale() -> dict:
    from evolution.tasks import supervise_jobs as supervise

    return supervise()
