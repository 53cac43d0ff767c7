"""Celery tasks of the admin pages (discovered as ``<app>.tasks``)."""

from __future__ import annotations

from celery import shared_task


@shared_task(
    name="benchapp.tasks.seed_import_run",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
)
def seed_import_run(job_id: int) -> str:
    """Import one uploaded seed file (``benchapp.staff.imports.import_job_run``)."""
    from benchapp.staff.imports import import_job_run

    return import_job_run(job_id)
