"""Celery discovers ``<app>.tasks``: the evolution app's tasks are the one stream task module
(every kind's steps, the campaign tick, and the older task names as aliases) and the job
supervisor's pass."""

import logging

from celery import shared_task

from evolution.sandbox import tasks as sandbox_tasks  # noqa: F401 - registers the judge's chunk task
from evolution.streams import tasks as stream_tasks  # noqa: F401 - registers them with Celery

log = logging.getLogger(__name__)


@shared_task(
    name="evolution.jobs.supervise", acks_late=True, reject_on_worker_lost=True, ignore_result=True
)
def supervise_jobs() -> dict:
    """Beat's ``job-supervisor`` entry: re-send the jobs whose message was lost, take back the
    running jobs whose worker died (``evolution.jobs``), for every registered kind of job."""
    from evolution import jobs
    from evolution.streams import errors

    try:
        return jobs.supervise().as_dict()
    except Exception as exc:
        if not errors.is_connection_error(exc):
            raise
        log.warning("job supervisor: %s; the next pass tries again", errors.describe(exc))
        return {"error": errors.describe(exc)}
