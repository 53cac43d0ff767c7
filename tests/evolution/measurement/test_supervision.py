"""A curator's panel measurement whose step message was lost (a broker restart) does not stay
pending for good: it is a re-send-only supervised job of the one job machinery
(``evolution.jobs``, ``evolution.measurement.jobs``). A campaign's measurements are left to
their campaign's runner; nothing is ever taken back or failed by the supervisor, since a
measurement holds no claim."""

from __future__ import annotations

from datetime import timedelta

import pytest
from celery import current_app
from django.utils import timezone

from evolution import jobs
from evolution.measurement import services
from evolution.measurement.jobs import MEASUREMENT_JOB
from evolution.measurement.models import Measurement, MeasurementState
from evolution.models import Campaign, Problem, TestCase

from .helpers import make_panel

pytestmark = pytest.mark.django_db


def _problem(title: str) -> Problem:
    problem = Problem.objects.create(title=title, statement="Print 2n.", harness="stdio")
    t = TestCase(problem=problem, tier="small", ordinal=0, hidden=True)
    t.input, t.output = "3\n", "6\n"
    t.save()
    return problem


@pytest.fixture
def sent(monkeypatch):
    out: list[tuple] = []
    monkeypatch.setattr(current_app, "send_task", lambda name, args, **o: out.append((name, args)))
    return out


def test_a_curators_measurement_left_pending_is_sent_again_once_per_period(
    fake_server, settings, sent, django_capture_on_commit_callbacks
):
    settings.JOB_RESEND_SECONDS = 600
    assert MEASUREMENT_JOB in jobs.supervised_jobs()
    panel = make_panel(fake_server, ["strong"])
    with django_capture_on_commit_callbacks():  # the first message, lost with the broker
        batch = services.batch_create(panel=panel, problems=[_problem("Double")])
    [measurement] = batch.measurements.all()
    assert measurement.state == MeasurementState.PENDING and measurement.sent_at is not None
    label = f"panel measurement {measurement.pk}"

    assert label not in jobs.supervise().resent  # sent just now
    Measurement.objects.filter(pk=measurement.pk).update(
        sent_at=timezone.now() - timedelta(minutes=11)
    )
    report = jobs.supervise()
    assert label in report.resent
    assert sent == [(services.SOLVE_TASK, (measurement.pk,))]
    assert "re-sent" in Measurement.objects.get(pk=measurement.pk).recovery
    assert label not in jobs.supervise().resent  # not again within the period
    assert report.requeued == [] and report.failed == []  # no claim: never taken back

    # A finished one is never re-sent.
    Measurement.objects.filter(pk=measurement.pk).update(
        state=MeasurementState.FAILED, reason="x", sent_at=timezone.now() - timedelta(hours=1)
    )
    assert label not in jobs.supervise().resent


def test_a_campaigns_measurement_is_left_to_its_campaign(fake_server, settings, sent):
    settings.JOB_RESEND_SECONDS = 600
    panel = make_panel(fake_server, ["strong"])
    campaign = Campaign.objects.create(name="c", kind="xcoder")
    measurement = services.measurement_create(
        problem=_problem("Square"), panel=panel, campaign=campaign
    )
    Measurement.objects.filter(pk=measurement.pk).update(
        sent_at=timezone.now() - timedelta(hours=1)
    )
    assert f"panel measurement {measurement.pk}" not in jobs.supervise().resent
    assert sent == []
