"""The Wilson interval of the living benchmark, checked against scipy's binomtest."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from scipy.stats import binomtest

from evolution.models import ModelEndpoint
from releases import living


@pytest.mark.parametrize(("passes", "n"), [(0, 8), (7, 8), (8, 8), (3, 4), (50, 120)])
def test_the_wilson_interval_matches_scipy(passes, n):
    expected = binomtest(passes, n).proportion_ci(confidence_level=0.95, method="wilson")
    low, high = living.wilson_interval(passes, n)
    assert low == pytest.approx(expected.low, abs=1e-9)
    assert high == pytest.approx(expected.high, abs=1e-9)


def test_adding_a_model_needs_a_published_release(frozen):
    _, release = frozen
    endpoint = ModelEndpoint.objects.create(name="m", base_url="http://127.0.0.1:9/v1", model="m")
    with pytest.raises(ValidationError) as exc:
        living.panel_seat_add(benchmark=release.benchmark, endpoint=endpoint)
    assert "benchmark" in exc.value.message_dict


def test_a_model_cannot_sit_twice_on_a_panel(published):
    _, release = published
    endpoint = ModelEndpoint.objects.create(name="m", base_url="http://127.0.0.1:9/v1", model="m")
    living.panel_seat_add(benchmark=release.benchmark, endpoint=endpoint)
    with pytest.raises(ValidationError) as exc:
        living.panel_seat_add(benchmark=release.benchmark, endpoint=endpoint)
    assert "endpoint" in exc.value.message_dict


def test_beat_schedules_the_remeasurement_task_it_names():
    from datetime import timedelta

    from django.conf import settings

    from benchapp.celery import app

    entry = settings.CELERY_BEAT_SCHEDULE["living-remeasure"]
    assert entry["schedule"] == timedelta(hours=settings.LIVING_REMEASURE_HOURS)
    app.loader.import_default_modules()
    assert entry["task"] in app.tasks


def test_the_schedule_remeasures_every_benchmark_with_a_panel(
    published, django_capture_on_commit_callbacks
):
    from releases.models import PanelSeat, Remeasurement

    _, release = published
    endpoint = ModelEndpoint.objects.create(name="m", base_url="http://127.0.0.1:9/v1", model="m")
    assert living.remeasure_scheduled() == []  # no panel yet: nothing to re-measure
    PanelSeat.objects.create(benchmark=release.benchmark, endpoint=endpoint, samples=2)
    with django_capture_on_commit_callbacks() as callbacks:
        started = living.remeasure_scheduled()
    assert len(started) == 1 and len(callbacks) == 1  # the task is enqueued on commit
    r = Remeasurement.objects.get(pk=started[0])
    assert (r.release, r.trigger, r.state) == (release, "schedule", "queued")
    assert [run.label for run in r.runs.all()] == ["m"]


def test_one_beat_entry_resends_the_remeasurements_left_queued(settings):
    """Re-measurements are supervised jobs like every other: the one job supervisor re-sends
    them (there was a second beat entry for them alone)."""
    from benchapp.celery import app
    from evolution import jobs
    from releases.jobs import REMEASUREMENT

    entry = settings.CELERY_BEAT_SCHEDULE["job-supervisor"]
    app.loader.import_default_modules()
    assert entry["task"] == "evolution.jobs.supervise" and entry["task"] in app.tasks
    assert REMEASUREMENT in jobs.supervised_jobs()
    resending = [
        name
        for name, e in settings.CELERY_BEAT_SCHEDULE.items()
        if e["task"] in ("releases.tasks.remeasurement_resend_stale", "evolution.jobs.supervise")
    ]
    assert resending == ["job-supervisor"]
    # The older task names stay registered while a message under them may be queued.
    for name in ("releases.tasks.remeasurement_resend_stale", "releases.tasks.supervise_jobs"):
        assert name in app.tasks


def test_a_remeasurement_left_queued_is_sent_again_once_per_period(
    published, django_capture_on_commit_callbacks, monkeypatch, settings
):
    """Its first message lost (a broker restart, a publish that never left): still queued
    JOB_RESEND_SECONDS after it was sent, the job supervisor publishes its task again, once
    per period."""
    from datetime import timedelta

    from celery import current_app
    from django.utils import timezone

    from evolution import jobs
    from releases.models import PanelSeat, Remeasurement

    settings.JOB_RESEND_SECONDS = 600
    sent: list[tuple] = []
    monkeypatch.setattr(current_app, "send_task", lambda name, args: sent.append((name, args)))
    _, release = published
    endpoint = ModelEndpoint.objects.create(name="m", base_url="http://127.0.0.1:9/v1", model="m")
    PanelSeat.objects.create(benchmark=release.benchmark, endpoint=endpoint, samples=2)
    with django_capture_on_commit_callbacks(execute=True):
        [rid] = living.remeasure_scheduled()
    assert sent == [("releases.tasks.remeasurement_run", (rid,))]
    assert Remeasurement.objects.get(pk=rid).sent_at is not None
    label = f"re-measurement {rid}"

    assert label not in jobs.supervise().resent  # sent just now
    Remeasurement.objects.filter(pk=rid).update(sent_at=timezone.now() - timedelta(minutes=11))
    assert label in jobs.supervise().resent
    assert label not in jobs.supervise().resent  # not again within the period
    assert sent[-1] == ("releases.tasks.remeasurement_run", (rid,)) and len(sent) == 2

    # Never sent at all (the process died before its commit hook ran): counted from creation.
    Remeasurement.objects.filter(pk=rid).update(
        sent_at=None, created_at=timezone.now() - timedelta(minutes=30)
    )
    assert label in jobs.supervise().resent
    # A re-measurement that started (its worker heartbeating) is not re-sent.
    Remeasurement.objects.filter(pk=rid).update(
        state="running", sent_at=timezone.now() - timedelta(hours=1), heartbeat_at=timezone.now()
    )
    report = jobs.supervise()
    assert label not in report.resent and label not in report.requeued
