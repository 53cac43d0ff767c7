"""A curator's panel measurement is a supervised job (``evolution.jobs``), re-send only: its steps
are idempotent (unique attempts, conditional verdicts) and each sends the next, so the only
thing that could leave it pending for good is a lost message. The job supervisor re-sends the
solve step of a measurement still pending ``JOB_RESEND_SECONDS`` after its last message (the
step reroutes itself to judging when every attempt is in). A campaign's measurements are left to
their campaign, whose runner drives them."""

from __future__ import annotations

from evolution.jobs import Job

from .models import Measurement, MeasurementState
from .services import SOLVE_TASK


def _outside_campaigns(rows):
    return rows.filter(campaign__isnull=True)


MEASUREMENT_JOB = Job(
    "panel measurement",
    Measurement,
    SOLVE_TASK,
    again="retry it from its page once the cause is fixed",
    queued_alone=_outside_campaigns,
    waiting_state=MeasurementState.PENDING,
    resend_only=True,
)
