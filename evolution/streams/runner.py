"""The one runner: claim, load, next action, run the stage, release, schedule the next step.

Every kind's steps go through ``advance``; the Celery tasks, the campaign tick and the
in-process runner (``run_inline``: ``make demo``, ``run_campaign --inline``, tests) all call it.

One failure policy for every kind (``_record_error``): a failed step is retried up to
``MAX_CONSECUTIVE_ERRORS`` times; then an infrastructure failure (``errors.is_infrastructure``)
pauses the campaign with the reason and never blames or retires a unit, while any other failure
makes the kind give up on the item the step worked on. A budget exhausted pauses at once.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta

from django.db import DatabaseError, connections, transaction
from django.db.models import F, Q
from django.utils import timezone

from evolution.connections import drop_broken_connections
from evolution.llm import BudgetExhausted
from evolution.models import Campaign, StepFailure
from evolution.models.campaigns import CampaignState

from . import errors, lifecycle
from .kinds import ANY, DEFAULT, Kind, kind_for
from .lifecycle import STEP_TASK, lease_seconds

log = logging.getLogger(__name__)

MAX_CONSECUTIVE_ERRORS = 3


class StepInterrupted(Exception):
    """The database or the broker went away in the middle of a step: the step is retried later
    with the same ticket. ``held`` is the lease this step still holds (it could not be given
    back), so that the retry may claim the stream again at once instead of waiting for it to
    expire; None when nothing is held."""

    def __init__(self, detail: str, *, held: str | None):
        super().__init__(detail)
        self.held = held


@dataclass
class StepReport:
    outcome: str  # "done" | "skipped" | "rerouted" | "finished" | "error" | "paused"
    action: str = ""
    detail: str = ""


def _kind(kind: Kind | str) -> Kind:
    return kind if isinstance(kind, Kind) else kind_for(kind)


# --------------------------------------------------------------------------- claiming


def lease_claim(rows, *, ticket: str | None, held: str | None = None) -> str | None:
    """Claim the row ``rows`` selects with one conditional UPDATE; return the lease token, or
    None when another worker holds an unexpired lease or ``ticket`` is not the current one
    (``ticket`` None skips that check: the in-process runner and tests). ``held``: a lease this
    step took before an outage interrupted it and could not give back; it may be taken again."""
    token = secrets.token_hex(8)
    now = timezone.now()
    free = Q(leased_until__isnull=True) | Q(leased_until__lt=now)
    if held:
        free |= Q(lease_token=held)
    rows = rows.filter(free)
    if ticket is not None:
        rows = rows.filter(ticket=ticket)
    claimed = rows.update(lease_token=token, leased_until=now + timedelta(seconds=lease_seconds()))
    return token if claimed else None


def lease_release(rows, token: str) -> None:
    """Give the lease back, if it is still ours."""
    rows.filter(lease_token=token).update(lease_token="", leased_until=None)


def claim(
    kind: Kind | str, stream_id: int, ticket: str | None = None, held: str | None = None
) -> str | None:
    kind = _kind(kind)
    rows = kind.stream_model.objects.filter(
        pk=stream_id, campaign__state=CampaignState.RUNNING
    ).filter(kind.active_streams)
    return lease_claim(rows, ticket=ticket, held=held)


def release(kind: Kind | str, stream_id: int, token: str) -> bool:
    """Give the lease back; False when the database could not be reached (the lease then
    expires, or the retried step takes it again)."""
    kind = _kind(kind)
    try:
        lease_release(kind.stream_model.objects.filter(pk=stream_id), token)
    except DatabaseError:
        log.exception("could not release the lease of %s stream %s", kind.name, stream_id)
        drop_broken_connections()
        return False
    return True


# --------------------------------------------------------------------------- one step


def advance(
    *,
    kind: Kind | str,
    stream_id: int,
    ticket: str | None = None,
    queue: str | None = None,
    schedule: bool = False,
    held: str | None = None,
) -> StepReport:
    """Advance one stream by one action.

    ``ticket`` must be the stream's current ticket (None skips the check). ``queue`` is the
    queue this worker serves (None: any); an action for another queue is handed over to it with
    the same ticket. ``schedule``: issue a new ticket and enqueue the next step (Celery).
    ``held``: the lease an interrupted attempt of this same step could not give back.

    With ``schedule`` (the Celery path), raises ``StepInterrupted`` when the database went away
    during the step and the failure could not even be recorded, the lease could not be given
    back, or the next step could not be scheduled: the task retries the step later with backoff
    and the same ticket; nothing is blamed on the unit. A database error while claiming
    propagates as it is (nothing was claimed)."""
    kind = _kind(kind)
    token = claim(kind, stream_id, ticket, held)
    if token is None:
        return StepReport(
            "skipped",
            detail="not claimable (leased, finished, stale ticket or campaign not running)",
        )
    rows = kind.stream_model.objects.filter(pk=stream_id)
    report = StepReport("done")
    reroute_to = None
    ctx = action = None
    outage: BaseException | None = None
    try:
        ctx = kind.load(stream_id)
        action = kind.next_action(ctx)
        if action is None:
            report.outcome = "finished"
        else:
            report.action = action.name
            stage = kind.stage(action.name)
            if queue is not None and stage.queue not in (queue, ANY):
                reroute_to = stage.queue
                report = StepReport("rerouted", action=action.name, detail=f"to queue {reroute_to}")
            else:
                stage.run(ctx, action)
                # ``updated_at`` is the stream's last progress (the supervisor reads it).
                rows.update(
                    consecutive_errors=0,
                    steps_done=F("steps_done") + 1,
                    last_error="",
                    updated_at=timezone.now(),
                )
    except (BudgetExhausted, *kind.budget_errors) as exc:
        lifecycle.campaign_pause_for_budget(
            campaign_id=_campaign_id(kind, stream_id), reason=str(exc)
        )
        report = StepReport("paused", action=report.action, detail=str(exc))
    except Exception as exc:
        log.exception("%s stream %s: action %s failed", kind.name, stream_id, report.action)
        report = StepReport("error", action=report.action, detail=errors.describe(exc))
        if errors.is_connection_error(exc):
            drop_broken_connections()
        try:
            _record_error(kind, stream_id, ctx, action, exc)
        except DatabaseError as db_exc:  # cannot even record it: the step is retried later
            log.exception("could not record the failure of %s stream %s", kind.name, stream_id)
            drop_broken_connections()
            outage = db_exc
    finally:
        released = release(kind, stream_id, token)
    if schedule and (outage is not None or not released):
        raise StepInterrupted(
            f"{kind.name} stream {stream_id}: "
            + (errors.describe(outage) if outage else "the lease could not be given back"),
            held=None if released else token,
        ) from outage
    if reroute_to is not None:
        if ticket is not None:
            enqueue_step(kind.name, stream_id, ticket, queue=reroute_to)
        return report
    if schedule:
        try:
            schedule_next(kind, stream_id)
        except DatabaseError as db_exc:
            drop_broken_connections()
            raise StepInterrupted(
                f"{kind.name} stream {stream_id}: the next step could not be scheduled: "
                + errors.describe(db_exc),
                held=None,
            ) from db_exc
    return report


def _campaign_id(kind: Kind, stream_id: int) -> int:
    return kind.stream_model.objects.values_list("campaign_id", flat=True).get(pk=stream_id)


def _record_error(kind: Kind, stream_id: int, ctx, action, exc: BaseException) -> None:
    """Count a failed step; at ``MAX_CONSECUTIVE_ERRORS`` apply the one failure policy."""
    rows = kind.stream_model.objects.filter(pk=stream_id)
    name = action.name if action is not None else "load"
    detail = errors.describe(exc)
    rows.update(
        consecutive_errors=F("consecutive_errors") + 1, last_error=f"{name}: {detail}"[:4000]
    )
    count, campaign_id = rows.values_list("consecutive_errors", "campaign_id").get()
    infrastructure = errors.is_infrastructure(exc)
    failure = _failure_record(kind, stream_id, campaign_id, name, exc, count, infrastructure)
    Consequence = StepFailure.Consequence
    # An endpoint that refuses its own configuration (a key, a model, a parameter) refuses it
    # again: the campaign pauses at the first failure instead of asking again.
    configuration = isinstance(exc, errors.EndpointUnavailable) and bool(exc.configuration)
    if count < MAX_CONSECUTIVE_ERRORS and not configuration:
        return
    rows.update(consecutive_errors=0)
    if infrastructure:
        # Never the unit's fault: nothing is retired; the campaign waits for the outage to end.
        _failure_consequence(failure, Consequence.PAUSED)
        with contextlib.suppress(lifecycle.TransitionError):
            lifecycle.campaign_pause(
                campaign_id=campaign_id,
                reason=(
                    f"endpoint configuration ({name}): {exc}"
                    if configuration
                    else f"infrastructure failure ({name} failed {count} times): {detail}"
                )[:300],
            )
        return
    reason = f"{name} failed {count} times: {detail}"[:2000]
    if ctx is not None and action is not None and kind.give_up(ctx, action, reason):
        _failure_consequence(failure, Consequence.GAVE_UP)
        return
    if kind.fail_stream is not None:
        _failure_consequence(failure, Consequence.STREAM_FAILED)
        kind.fail_stream(stream_id, reason[:300])
        return
    # A barrier (no item to give up on) that keeps failing: a programming error.
    _failure_consequence(failure, Consequence.CAMPAIGN_FAILED)
    lifecycle.campaign_fail(campaign_id=campaign_id, reason=reason)


TRACEBACK_MAX_CHARS = 20_000


def _worker_name() -> str:
    """The Celery worker running this step ("" in the in-process runner)."""
    from celery import current_task

    if not current_task:
        return ""
    return (getattr(current_task.request, "hostname", None) or "")[:200]


def _failure_record(kind, stream_id, campaign_id, name, exc, count, infrastructure):
    """Keep the failure with its traceback for the workers page; only the newest
    ``StepFailure.KEEP`` are kept."""
    text = "".join(traceback.format_exception(exc))
    if len(text) > TRACEBACK_MAX_CHARS:  # the end holds the frame that raised
        text = "…\n" + text[-TRACEBACK_MAX_CHARS:]
    failure = StepFailure.objects.create(
        campaign_id=campaign_id,
        kind=kind.name,
        stream_id=stream_id,
        action=name[:60],
        error=errors.describe(exc)[:4000],
        traceback=text,
        infrastructure=infrastructure,
        attempt=count,
        worker=_worker_name(),
    )
    StepFailure.objects.filter(pk__lte=failure.pk - StepFailure.KEEP).delete()
    return failure


def _failure_consequence(failure, consequence: str) -> None:
    StepFailure.objects.filter(pk=failure.pk).update(consequence=consequence)


# --------------------------------------------------------------------------- tickets, dispatch


def issue_ticket(
    kind: Kind | str, stream_id: int, *, campaign: Campaign, only_if_quiet: bool
) -> str | None:
    """Replace the stream's step ticket. With ``only_if_quiet``, only when no live lease holds
    it and its ticket is missing, older than a lease, or from another tick chain, so that two
    concurrent ticks cannot both issue one."""
    kind = _kind(kind)
    ticket = secrets.token_hex(8)
    now = timezone.now()
    rows = kind.stream_model.objects.filter(pk=stream_id)
    if only_if_quiet:
        rows = rows.filter(_quiet(campaign, now))
    updated = rows.update(ticket=ticket, ticket_issued_at=now, ticket_chain=campaign.tick_token)
    return ticket if updated else None


def _quiet(campaign: Campaign, now) -> Q:
    stale_before = now - timedelta(seconds=lease_seconds())
    return (Q(leased_until__isnull=True) | Q(leased_until__lt=now)) & (
        Q(ticket="") | Q(ticket_issued_at__lt=stale_before) | ~Q(ticket_chain=campaign.tick_token)
    )


def active_stream_ids(kind: Kind, campaign_id: int) -> list[int]:
    return list(
        kind.stream_model.objects.filter(campaign_id=campaign_id)
        .filter(kind.active_streams)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def dispatch(campaign: Campaign) -> bool:
    """The tick's dispatch for any kind: True when the campaign has no work left; otherwise
    (re)issue a ticket, and enqueue a step, for every active stream that has none in flight."""
    kind = kind_for(campaign.kind)
    if kind.finished(campaign):
        return True
    quiet = (
        kind.stream_model.objects.filter(campaign_id=campaign.pk)
        .filter(kind.active_streams)
        .filter(_quiet(campaign, timezone.now()))
    )
    for stream_id in list(quiet.values_list("pk", flat=True)):
        ticket = issue_ticket(kind, stream_id, campaign=campaign, only_if_quiet=True)
        if ticket:
            # The step reroutes itself when its action needs the other queue.
            enqueue_step(kind.name, stream_id, ticket, queue=DEFAULT)
    return False


def schedule_next(kind: Kind | str, stream_id: int) -> None:
    """After a step: enqueue the stream's next step on the queue its action needs, or tell the
    campaign (a one-off tick) that the stream has no work left."""
    kind = _kind(kind)
    stream = kind.stream_model.objects.select_related("campaign").get(pk=stream_id)
    campaign = stream.campaign
    if campaign.state != CampaignState.RUNNING:
        return
    active = kind.stream_model.objects.filter(pk=stream_id).filter(kind.active_streams).exists()
    action = kind.next_action(kind.load(stream_id)) if active else None
    if action is None:
        enqueue_tick(campaign.pk)
        return
    queue = kind.stage(action.name).queue
    ticket = issue_ticket(kind, stream_id, campaign=campaign, only_if_quiet=False)
    enqueue_step(kind.name, stream_id, ticket, queue=DEFAULT if queue == ANY else queue)


# --------------------------------------------------------------------------- enqueueing


def enqueue_step(kind_name: str, stream_id: int, ticket: str | None, *, queue: str) -> None:
    """After commit, enqueue one step of the stream on ``queue`` (by task name).

    When the broker cannot take the message (after the publish retry policy), the ticket is
    withdrawn so that the stream counts as having no step in flight: the next tick dispatches
    it again instead of waiting a whole lease for a message that was never sent."""
    if not ticket:
        return

    def send() -> None:
        try:
            lifecycle.send_task(STEP_TASK, (kind_name, stream_id, ticket, queue), queue=queue)
        except Exception:
            log.exception("could not enqueue a step of %s stream %s", kind_name, stream_id)
            with contextlib.suppress(Exception):
                kind_for(kind_name).stream_model.objects.filter(pk=stream_id, ticket=ticket).update(
                    ticket=""
                )

    transaction.on_commit(send)


def enqueue_tick(campaign_id: int) -> None:
    """A one-off tick: it does its work but does not continue a chain ("" matches no token)."""
    transaction.on_commit(lambda: lifecycle.send_task(lifecycle.TICK_TASK, (campaign_id, "")))


# --------------------------------------------------------------------------- the tick


def tick(*, campaign_id: int, token: str | None = None, reschedule: bool = True) -> str:
    """Start a queued campaign, dispatch the work that has none in flight, finish the campaign
    when its kind reports no work left, and come back later. A tick whose ``token`` is not the
    campaign's current one belongs to a replaced chain and stops."""
    now = timezone.now()
    lifecycle.campaign_start(campaign_id=campaign_id)
    campaign = Campaign.objects.get(pk=campaign_id)
    if campaign.state != CampaignState.RUNNING:
        return campaign.state
    if token and token != campaign.tick_token:
        return "superseded"
    if token:  # the chain is alive: its heartbeat for the supervisor
        Campaign.objects.filter(pk=campaign_id, tick_token=token).update(ticked_at=now)
    if dispatch(campaign):
        return lifecycle.campaign_finish(kind_for(campaign.kind), campaign)
    if reschedule and token:  # only a chain (a token) comes back; a one-off tick does not
        lifecycle.send_task(
            lifecycle.TICK_TASK, (campaign_id, token), countdown=lifecycle.tick_seconds()
        )
    return CampaignState.RUNNING


# --------------------------------------------------------------------------- in-process runner


def _advance_in_thread(kind: Kind, stream_id: int) -> StepReport:
    try:
        return advance(kind=kind, stream_id=stream_id)
    finally:
        connections.close_all()  # this thread's connections; the pool thread may be reused


def run_inline(
    *,
    campaign_id: int,
    workers: int = 2,
    max_steps: int | None = None,
    on_progress: Callable[[Campaign], None] | None = None,
) -> Campaign:
    """Drive the campaign in this process until its kind reports no work left, it is paused or
    cancelled, or ``max_steps`` steps ran (then it stays running and workers can take over).
    Streams of a kind that has several per campaign advance in a pool of ``workers`` threads.
    ``on_progress`` receives the ``Campaign`` after every round; so does the caller at the end."""
    campaign = Campaign.objects.get(pk=campaign_id)
    kind = kind_for(campaign.kind)
    lifecycle.campaign_start(campaign_id=campaign_id)
    steps_run = 0
    pool = None if kind.sequential else ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        while True:
            campaign = Campaign.objects.get(pk=campaign_id)
            if campaign.state != CampaignState.RUNNING:
                return campaign
            if kind.finished(campaign):
                lifecycle.campaign_finish(kind, campaign)
                return Campaign.objects.get(pk=campaign_id)
            ids = active_stream_ids(kind, campaign_id)
            if max_steps is not None:
                ids = ids[: max(0, max_steps - steps_run)]
                if not ids:
                    return campaign
            if pool is None or len(ids) == 1:
                reports = [advance(kind=kind, stream_id=i) for i in ids]
            else:
                reports = list(pool.map(lambda i: _advance_in_thread(kind, i), ids))
            steps_run += len(ids)
            if on_progress:
                on_progress(campaign)
            if reports and all(r.outcome == "skipped" for r in reports):
                time.sleep(0.2)  # every stream is leased elsewhere; wait for the leases
    finally:
        if pool is not None:
            pool.shutdown()
