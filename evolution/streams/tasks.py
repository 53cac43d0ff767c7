"""The one Celery task module: every kind's steps and the campaign tick.

Tasks take ids, import the runner in their bodies and call one service. They are idempotent by
construction (tickets, leases, unique constraints), so ``acks_late`` with
``reject_on_worker_lost`` is safe: a redelivered message does the next step or nothing.

A step or a tick that meets a lost database or broker connection does not end its chain: it is
sent again (same ticket, same chain token) after a backoff of 1, 2, 4 ... seconds, capped at
``CAMPAIGN_RETRY_BACKOFF_MAX_SECONDS``, for as long as the outage lasts. The supervisor
(``supervise``, run by ``celery beat``) restarts the chains that were lost anyway and pauses a
campaign that makes no progress (``evolution.streams.supervisor``).

Services enqueue by task name (``lifecycle.STEP_TASK``, ``lifecycle.TICK_TASK``) after commit. The
older per-kind task names stay registered as aliases, so messages already sitting in a queue
when a deployment switches over still run.
"""

from __future__ import annotations

import logging
import random

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from evolution.connections import drop_broken_connections

TASK_OPTIONS = {"acks_late": True, "reject_on_worker_lost": True, "ignore_result": True}
SUPERVISE_TASK = "evolution.streams.supervise"

log = logging.getLogger(__name__)


def backoff_seconds(attempt: int) -> float:
    """Delay before retry number ``attempt`` (0-based): 1, 2, 4 ... s up to the cap, with up
    to 25% jitter so that the steps of many streams do not all come back at the same instant."""
    cap = float(getattr(settings, "CAMPAIGN_RETRY_BACKOFF_MAX_SECONDS", 60.0))
    delay = min(cap, 2.0 ** min(attempt, 30))
    return delay * (1 + random.random() / 4)


def _send_later(task_name: str, args: tuple, kwargs: dict, *, countdown: float, **options):
    from celery import current_app

    current_app.signature(task_name, args=args, kwargs=kwargs, **options).apply_async(
        countdown=countdown
    )


def _step(
    kind: str, stream_id: int, ticket: str, queue: str, held: str | None = None, attempt: int = 0
) -> str:
    from evolution.streams import errors, lifecycle, runner

    try:
        report = runner.advance(
            kind=kind, stream_id=stream_id, ticket=ticket, queue=queue, schedule=True, held=held
        )
    except Exception as exc:
        interrupted = isinstance(exc, runner.StepInterrupted)
        if not interrupted and not errors.is_connection_error(exc):
            raise
        if interrupted:
            held = exc.held
        drop_broken_connections()
        delay = backoff_seconds(attempt)
        log.warning(
            "%s stream %s: %s; retrying the step in %.1f s (attempt %d)",
            kind,
            stream_id,
            errors.describe(exc),
            delay,
            attempt + 1,
        )
        _send_later(
            lifecycle.STEP_TASK,
            (kind, stream_id, ticket, queue),
            {"held": held, "attempt": attempt + 1},
            countdown=delay,
            queue=queue,
        )
        return "retry"
    return report.outcome


@shared_task(name="evolution.streams.step", **TASK_OPTIONS)
def stream_step(
    kind: str,
    stream_id: int,
    ticket: str,
    queue: str = "default",
    held: str | None = None,
    attempt: int = 0,
) -> str:
    """One step of one stream of any kind, as served from ``queue``. ``held`` and ``attempt``
    are set only on a retry after an outage."""
    return _step(kind, stream_id, ticket, queue, held, attempt)


def _tick(campaign_id: int, token: str | None, attempt: int = 0) -> str:
    from evolution.streams import errors, lifecycle, runner

    try:
        return runner.tick(campaign_id=campaign_id, token=token)
    except Exception as exc:
        if not errors.is_connection_error(exc):
            raise
        drop_broken_connections()
        delay = backoff_seconds(attempt)
        log.warning(
            "campaign %s: tick failed (%s); retrying in %.1f s (attempt %d)",
            campaign_id,
            errors.describe(exc),
            delay,
            attempt + 1,
        )
        _send_later(
            lifecycle.TICK_TASK, (campaign_id, token), {"attempt": attempt + 1}, countdown=delay
        )
        return "retry"


@shared_task(name="evolution.streams.tick", **TASK_OPTIONS)
def campaign_tick(campaign_id: int, token: str | None = None, attempt: int = 0) -> str:
    return _tick(campaign_id, token, attempt)


@shared_task(name=SUPERVISE_TASK, **TASK_OPTIONS)
def supervise() -> dict:
    """Restart the tick chains that went quiet; pause the campaigns that make no progress."""
    from evolution.streams import errors, supervisor

    try:
        report = supervisor.supervise()
    except Exception as exc:
        if not errors.is_connection_error(exc):
            raise
        drop_broken_connections()
        log.warning("supervisor: %s; the next pass tries again", errors.describe(exc))
        return {"error": errors.describe(exc)}
    return {"checked": report.checked, "restarted": report.restarted, "paused": report.paused}


# --------------------------------------------------------------------------- older names


@shared_task(name="evolution.tasks.campaign_tick", **TASK_OPTIONS)
def legacy_campaign_tick(campaign_id: int, token: str | None = None) -> str:
    return _tick(campaign_id, token)


@shared_task(name="evolution.tasks.lineage_step", **TASK_OPTIONS)
def legacy_lineage_step(lineage_id: int, ticket: str) -> str:
    return _step("benchevolver", lineage_id, ticket, "default")


@shared_task(name="evolution.tasks.sandbox_lineage_step", **TASK_OPTIONS)
def legacy_sandbox_lineage_step(lineage_id: int, ticket: str) -> str:
    return _step("benchevolver", lineage_id, ticket, "sandbox")


@shared_task(name="reasoning.tasks.reasoning_step", **TASK_OPTIONS)
def legacy_reasoning_step(campaign_id: int, ticket: str) -> str:
    return _step("reasoning", campaign_id, ticket, "default")


@shared_task(name="xcoder.tasks.xcoder_step", **TASK_OPTIONS)
def legacy_xcoder_step(campaign_id: int, ticket: str) -> str:
    return _step("xcoder", campaign_id, ticket, "default")


@shared_task(name="evosyn.tasks.evosyn_step", **TASK_OPTIONS)
def legacy_evosyn_step(campaign_id: int, ticket: str) -> str:
    return _step("evosyn", campaign_id, ticket, "default")


@shared_task(name="frontiersmith.tasks.frontier_step", **TASK_OPTIONS)
def legacy_frontier_step(campaign_id: int, ticket: str) -> str:
    return _step("frontiersmith", campaign_id, ticket, "default")


LEGACY_TASK_NAMES = (
    "evolution.tasks.campaign_tick",
    "evolution.tasks.lineage_step",
    "evolution.tasks.sandbox_lineage_step",
    "reasoning.tasks.reasoning_step",
    "xcoder.tasks.xcoder_step",
    "evosyn.tasks.evosyn_step",
    "frontiersmith.tasks.frontier_step",
)


@worker_ready.connect
def resume_campaigns_on_worker_start(sender=None, **kwargs) -> None:
    """A worker (re)started: running campaigns get a fresh tick chain, so work held by a
    killed worker is taken over once its leases expire (nothing waits for broker redelivery)."""
    from evolution.models import Campaign
    from evolution.models.campaigns import CampaignState
    from evolution.streams import lifecycle

    running = Campaign.objects.filter(state__in=[CampaignState.QUEUED, CampaignState.RUNNING])
    for campaign_id in running.values_list("pk", flat=True):
        lifecycle.start_ticking(campaign_id)
