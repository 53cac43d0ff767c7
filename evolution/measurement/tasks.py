"""Celery tasks of panel measurements: ids in, one service call (``services.measurement_step``).

Idempotent by construction (unique attempts, conditional verdict updates), so ``acks_late``
with ``reject_on_worker_lost`` is safe: a redelivered message does what is missing or nothing.
"""

from __future__ import annotations

from celery import shared_task

TASK_OPTIONS = {"acks_late": True, "reject_on_worker_lost": True, "ignore_result": True}


@shared_task(name="evolution.measurement.solve", **TASK_OPTIONS)
def measurement_solve(measurement_id: int) -> str:
    """Ask the panel's missing attempts (queue ``default``)."""
    from . import services

    return services.measurement_step(measurement_id=measurement_id, queue="default")


@shared_task(name="evolution.measurement.judge", **TASK_OPTIONS)
def measurement_judge(measurement_id: int) -> str:
    """Judge the attempts and finish the measurement (queue ``sandbox``)."""
    from . import services

    return services.measurement_step(measurement_id=measurement_id, queue="sandbox")
