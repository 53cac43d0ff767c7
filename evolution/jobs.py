"""The one supervised-job machinery: background jobs pause or heal, never stall. Every app
registers its jobs here (``register``, from its AppConfig.ready): releases' leaderboard runs,
independent evaluations, re-measurements and question runs (``releases.jobs``), benchapp's seed
imports (docs/deployment.md#outages).

Each job is a row with a state (queued, running, completed, failed) and a Celery task that
executes it by id. Three things could leave such a row in place for good: its message was lost
with a broker restart (or never published), its worker was killed while running it, or two
messages for it ran it twice. This module handles all three:

- **One execution at a time.** An execution *claims* the row (``claim``): a conditional UPDATE
  that takes a queued or failed row, or a running row whose holder stopped heartbeating for
  ``JOB_LOST_SECONDS``, and writes a fresh token. A second message for a row someone holds is
  a no-op, so re-sending a job is always safe. While it runs, the execution writes its
  heartbeat every ``JOB_HEARTBEAT_SECONDS`` from a thread of its own (``beating``); its final
  write goes through only while it still holds the token (``finish``).
- **A lost message is sent again.** ``supervise`` (beat's ``job-supervisor`` entry, every
  ``JOB_SUPERVISE_SECONDS``) re-publishes the task of every job still queued
  ``JOB_RESEND_SECONDS`` after its message was last sent (or created, if never sent). Each row
  is taken for the re-send by a conditional UPDATE of ``sent_at``, so two passes at once send it
  once.
- **A dead worker's job is taken back.** A running job whose heartbeat is older than
  ``JOB_LOST_SECONDS`` counts one lost worker: it is queued again and its message sent, or,
  after ``JOB_MAX_LOST_WORKERS`` lost workers, failed with the reason (a job that kills its
  worker every time must not loop). The row's ``recovery`` says what happened; its page shows
  it.
- **A job that only needs its message re-sent** (``Job.resend_only``: a curator's panel
  measurement, whose steps are idempotent and send the next one themselves): no claim, no
  heartbeat; a row still waiting ``JOB_RESEND_SECONDS`` after its last message gets it again.
- **A person runs a failed job again** (``job_run_again``, the pages' Run again): it is queued
  with its lost workers back at 0, so the limit counts only the workers this attempt loses.

A job may leave some of its rows to another job (``Job.queued_alone``: releases' leaderboard
runs inside a queued or running re-measurement get no message of their own, the re-measurement
runs them) and reset rows of its own with a failed one run again (``Job.run_again_also``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection, connections, transaction
from django.db.models import F, Q
from django.utils import timezone

log = logging.getLogger(__name__)

QUEUED, RUNNING, FAILED = "queued", "running", "failed"


@dataclass(frozen=True)
class Job:
    label: str
    model: type
    task: str
    # Whether a message for a failed row runs it again (a leaderboard run asks only what the
    # failed execution left missing). A job whose input is gone once it ran (a seed import
    # drops its upload) must not be run again by a late duplicate message.
    retakes_failed: bool = True
    # What the person should do once the supervisor failed the job.
    again: str = "run it again once the cause is fixed"
    # The rows that depend on their own message (default: all); the others are run by another
    # job, which the supervisor re-sends instead.
    queued_alone: Callable | None = field(default=None, compare=False)
    # Called inside job_run_again's transaction with (pk, fields) to reset rows the job runs.
    run_again_also: Callable | None = field(default=None, compare=False)
    # The state a row waits in for its message (``queued`` unless the job names its own).
    waiting_state: str = QUEUED
    # A job whose steps are idempotent and re-send themselves, with no claim or heartbeat
    # (a panel measurement): the supervisor only re-sends the message of a row left waiting.
    resend_only: bool = False


# Registered by the apps when Django starts (their AppConfig.ready), so that the platform
# imports none of them.
_registered: list[Job] = []


def register(job: Job) -> Job:
    """Put a job kind under supervision. Its model carries ``evolution.models.jobs.
    SupervisedJob``'s fields, a ``state`` with the queued / running / failed values, ``error``
    and ``created_at``; its task executes it with ``claim``, ``beating`` and ``finish``."""
    if all(known.task != job.task for known in _registered):
        _registered.append(job)
    return job


def supervised_jobs() -> tuple[Job, ...]:
    return tuple(_registered)


def heartbeat_seconds() -> float:
    return float(getattr(settings, "JOB_HEARTBEAT_SECONDS", 15.0))


def lost_seconds() -> float:
    return float(getattr(settings, "JOB_LOST_SECONDS", 120.0))


def resend_seconds() -> float:
    return float(getattr(settings, "JOB_RESEND_SECONDS", 600.0))


def max_lost_workers() -> int:
    return int(getattr(settings, "JOB_MAX_LOST_WORKERS", 3))


# --- executing: claim, heartbeat, finish ---------------------------------------------------


def claim(model, pk: int, *, retake_failed: bool = True) -> str | None:
    """Take the row for one execution: its token, or None when another execution holds it
    (running, heartbeat fresh) or it is completed (or failed, with ``retake_failed=False``)."""
    now = timezone.now()
    token = uuid.uuid4().hex
    free = (
        Q(state__in=[QUEUED, FAILED] if retake_failed else [QUEUED])
        | Q(state=RUNNING, heartbeat_at__isnull=True)
        | Q(state=RUNNING, heartbeat_at__lt=now - timedelta(seconds=lost_seconds()))
    )
    taken = (
        model.objects.filter(pk=pk)
        .filter(free)
        .update(state=RUNNING, error="", claim=token, heartbeat_at=now)
    )
    return token if taken else None


def finish(model, pk: int, token: str, **fields) -> bool:
    """Write the execution's outcome, only while it still holds the row (a worker the
    supervisor gave up on, but that was only slow, does not overwrite its successor)."""
    return bool(model.objects.filter(pk=pk, claim=token).update(**fields))


class _Heart(threading.Thread):
    def __init__(self, model, pk: int, token: str, every: float):
        super().__init__(name=f"heartbeat-{model.__name__}-{pk}", daemon=True)
        self.model, self.pk, self.token, self.every = model, pk, token, every
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            while not self.stopped.wait(self.every):
                try:
                    # Only while running: a finished row (a published run is immutable) is
                    # never touched again.
                    beat = self.model.objects.filter(
                        pk=self.pk, claim=self.token, state=RUNNING
                    ).update(heartbeat_at=timezone.now())
                except DatabaseError:  # an outage: the next beat tries again
                    log.warning("heartbeat of %s %s failed", self.model.__name__, self.pk)
                    connections.close_all()
                    continue
                if not beat:  # finished, or taken over by another execution: nothing to keep
                    return
        finally:
            connections.close_all()


@contextlib.contextmanager
def beating(model, pk: int, token: str):
    """Write the row's heartbeat every ``JOB_HEARTBEAT_SECONDS`` while the block runs. Inside a
    transaction the row is the caller's alone until it commits, so no heartbeat is needed (and
    one from another connection would wait for the caller's lock)."""
    if connection.in_atomic_block:
        yield None
        return
    heart = _Heart(model, pk, token, heartbeat_seconds())
    heart.start()
    try:
        yield heart
    finally:
        heart.stopped.set()
        heart.join(timeout=5)


# --- supervising --------------------------------------------------------------------------


@dataclass
class SupervisionReport:
    resent: list[str] = field(default_factory=list)
    requeued: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"resent": self.resent, "requeued": self.requeued, "failed": self.failed}


def _send(job: Job, pk: int) -> None:
    from celery import current_app

    current_app.send_task(job.task, (pk,))


def _queued_alone(job: Job):
    """The job's rows that depend on their own message (see the module docstring)."""
    rows = job.model.objects.all()
    return job.queued_alone(rows) if job.queued_alone is not None else rows


def resend_stale(job: Job, *, now, report: SupervisionReport) -> None:
    before = now - timedelta(seconds=resend_seconds())
    stale = (
        _queued_alone(job)
        .filter(state=job.waiting_state)
        .filter(Q(sent_at__lt=before) | Q(sent_at__isnull=True, created_at__lt=before))
    )
    for pk, sent_at in stale.values_list("pk", "sent_at"):
        note = (
            f"message re-sent at {now:%Y-%m-%d %H:%M:%S} UTC: still {job.waiting_state} "
            f"{int(resend_seconds())} s after it was "
            + ("sent" if sent_at else "created (never sent)")
        )
        taken = job.model.objects.filter(pk=pk, state=job.waiting_state, sent_at=sent_at).update(
            sent_at=now, recovery=note[:300]
        )
        if taken:
            _send(job, pk)
            report.resent.append(f"{job.label} {pk}")
            log.warning(
                "%s %s: still %s; its message was sent again", job.label, pk, job.waiting_state
            )


def take_back_lost(job: Job, *, now, report: SupervisionReport) -> None:
    lost_before = now - timedelta(seconds=lost_seconds())
    limit = max_lost_workers()
    lost = job.model.objects.filter(state=RUNNING).filter(
        Q(heartbeat_at__lt=lost_before) | Q(heartbeat_at__isnull=True)
    )
    for pk, token, beat, count in lost.values_list("pk", "claim", "heartbeat_at", "lost_workers"):
        count += 1
        since = (
            f"its worker stopped heartbeating at {beat:%Y-%m-%d %H:%M:%S} UTC"
            if beat
            else "its worker never heartbeated"
        )
        holder = Q(pk=pk, state=RUNNING, claim=token, heartbeat_at=beat)
        if count >= limit:
            reason = (
                f"failed by the supervisor at {now:%Y-%m-%d %H:%M:%S} UTC: {since} "
                f"(lost worker {count} of JOB_MAX_LOST_WORKERS={limit}); {job.again}"
            )
            taken = job.model.objects.filter(holder).update(
                state=FAILED,
                error=reason,
                recovery=reason[:300],
                lost_workers=F("lost_workers") + 1,
                claim="",
            )
            if taken:
                report.failed.append(f"{job.label} {pk}")
                log.warning("%s %s failed: %s", job.label, pk, since)
            continue
        note = (
            f"re-queued by the supervisor at {now:%Y-%m-%d %H:%M:%S} UTC: {since} "
            f"(lost worker {count} of {limit})"
        )
        alone = _queued_alone(job).filter(pk=pk).exists()
        taken = job.model.objects.filter(holder).update(
            state=QUEUED,
            claim="",
            recovery=note[:300],
            lost_workers=F("lost_workers") + 1,
            **({"sent_at": now} if alone else {}),
        )
        if taken:
            if alone:
                _send(job, pk)
            report.requeued.append(f"{job.label} {pk}")
            log.warning("%s %s re-queued: %s", job.label, pk, since)


def supervise(*, now=None) -> SupervisionReport:
    """One pass over every kind of job (see the module docstring)."""
    now = now or timezone.now()
    report = SupervisionReport()
    for job in supervised_jobs():
        if not job.resend_only:
            take_back_lost(job, now=now, report=report)
        resend_stale(job, now=now, report=report)
    return report


def job_run_again(*, job: Job, pk: int, by=None) -> bool:
    """A person runs a failed job again: it is queued with its count of lost workers back at 0
    (the supervisor's ``JOB_MAX_LOST_WORKERS`` counts the workers lost by this attempt, not
    by the attempts before the person fixed the cause) and its message is sent on commit.
    An execution asks only what the failed attempt left missing. Only a failed row is taken
    (a conditional UPDATE): False for a queued, running or completed one. A re-measurement's
    own failed runs are reset with it (it runs them: ``Job.run_again_also``)."""
    now = timezone.now()
    who = getattr(by, "username", "") or "someone"
    note = f"run again by {who} at {now:%Y-%m-%d %H:%M:%S} UTC"
    fields = {"state": QUEUED, "error": "", "claim": "", "lost_workers": 0, "recovery": note}
    with transaction.atomic():
        taken = job.model.objects.filter(pk=pk, state=FAILED).update(**fields)
        if not taken:
            return False
        if job.run_again_also is not None:
            job.run_again_also(pk, fields)
        if _queued_alone(job).filter(pk=pk).exists():
            job.model.objects.filter(pk=pk).update(sent_at=now)
            transaction.on_commit(lambda: _send(job, pk))
    log.info("%s %s: %s", job.label, pk, note)
    return True


def note_sent(model, pk: int) -> None:
    """Record that the job's message was just published."""
    model.objects.filter(pk=pk).update(sent_at=timezone.now())
