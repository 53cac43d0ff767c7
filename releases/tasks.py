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
    from . import jobs
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
    from . import jobs
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


@shared_task(**TASK_OPTIONS)
def supervise_jobs() -> dict:
    """Beat's entry: re-send the jobs whose message was lost, take back the running jobs whose
    worker died (``releases.jobs``)."""
    from evolution.streams import errors

    from . import jobs

    try:
        return jobs.supervise().as_dict()
    except Exception as exc:
        if not errors.is_connection_error(exc):
            raise
        log.warning("job supervisor: %s; the next pass tries again", errors.describe(exc))
        return {"error": errors.describe(exc)}


@shared_task(**TASK_OPTIONS)
def remeasurement_resend_stale() -> list[int]:
    """Beat's entry: publish again the re-measurements that stayed queued too long."""
    from . import living

    return living.remeasurement_resend_stale()
