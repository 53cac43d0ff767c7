"""The supervisor's decisions and the tasks' retry after a lost connection, one at a time (the
outages themselves, with real processes, are in test_outages.py)."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest
from django.db import OperationalError
from django.utils import timezone

from evolution.benchevolver.models import Lineage
from evolution.models import Campaign
from evolution.models.campaigns import CampaignState
from evolution.streams import errors, lifecycle, runner, supervisor, tasks
from tests.factories import CampaignFactory, LineageFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    """Messages the runner and the tasks publish, recorded instead of sent."""
    out: list[tuple] = []

    def record(task_name, args, **options):
        out.append((task_name, args, options))

    monkeypatch.setattr(lifecycle, "send_task", record)
    monkeypatch.setattr(
        tasks,
        "_send_later",
        lambda name, args, kwargs, countdown, **options: out.append(
            (name, args, {"kwargs": kwargs, "countdown": countdown, **options})
        ),
    )
    return out


def running(*, ticked_ago: float, progress_ago: float) -> Campaign:
    now = timezone.now()
    campaign = CampaignFactory(state=CampaignState.RUNNING, tick_token="chain")
    LineageFactory(campaign=campaign)
    Campaign.objects.filter(pk=campaign.pk).update(
        ticked_at=now - timedelta(seconds=ticked_ago),
        updated_at=now - timedelta(seconds=progress_ago),
        started_at=now - timedelta(seconds=progress_ago),
    )
    Lineage.objects.filter(campaign=campaign).update(
        updated_at=now - timedelta(seconds=progress_ago), last_error="judge: OperationalError: x"
    )
    return Campaign.objects.get(pk=campaign.pk)


def test_a_chain_that_went_quiet_is_restarted_and_a_live_one_is_left_alone(
    settings, sent, django_capture_on_commit_callbacks
):
    settings.CAMPAIGN_QUIET_SECONDS = 60
    settings.CAMPAIGN_STALL_SECONDS = 3600
    quiet = running(ticked_ago=300, progress_ago=30)
    alive = running(ticked_ago=5, progress_ago=30)

    with django_capture_on_commit_callbacks(execute=True):
        report = supervisor.supervise()

    assert report.restarted == [quiet.pk] and report.paused == []
    quiet.refresh_from_db()
    assert quiet.tick_token != "chain"  # a new chain ...
    assert sent == [(lifecycle.TICK_TASK, (quiet.pk, quiet.tick_token), {})]  # ... ticking now
    assert (timezone.now() - quiet.ticked_at).total_seconds() < 5
    assert Campaign.objects.get(pk=alive.pk).tick_token == "chain"


def test_a_queued_campaign_whose_first_tick_was_lost_is_started(
    settings, sent, django_capture_on_commit_callbacks
):
    settings.CAMPAIGN_QUIET_SECONDS = 60
    campaign = CampaignFactory(state=CampaignState.QUEUED)
    Campaign.objects.filter(pk=campaign.pk).update(
        updated_at=timezone.now() - timedelta(seconds=120)
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert supervisor.supervise().restarted == [campaign.pk]
    assert [s[0] for s in sent] == [lifecycle.TICK_TASK]


def test_a_campaign_without_progress_is_paused_with_the_reason(settings, sent):
    settings.CAMPAIGN_QUIET_SECONDS = 60
    settings.CAMPAIGN_STALL_SECONDS = 600
    stalled = running(ticked_ago=1, progress_ago=900)
    moving = running(ticked_ago=1, progress_ago=100)

    report = supervisor.supervise()

    assert report.paused == [stalled.pk] and report.restarted == []
    stalled.refresh_from_db()
    assert stalled.state == CampaignState.PAUSED
    assert stalled.state_reason.startswith("no progress for 9")
    assert "CAMPAIGN_STALL_SECONDS=600" in stalled.state_reason
    assert "last error: judge: OperationalError" in stalled.state_reason
    assert Campaign.objects.get(pk=moving.pk).state == CampaignState.RUNNING


def test_stall_pausing_can_be_turned_off(settings, sent):
    settings.CAMPAIGN_STALL_SECONDS = 0
    campaign = running(ticked_ago=1, progress_ago=10**6)
    assert supervisor.supervise().paused == []
    assert Campaign.objects.get(pk=campaign.pk).state == CampaignState.RUNNING


def test_a_completed_step_counts_as_progress(settings, sent, monkeypatch):
    """The runner stamps the stream's ``updated_at`` when a step completes."""
    campaign = running(ticked_ago=1, progress_ago=5000)
    stream = campaign.lineages.get()
    before = supervisor.last_progress(campaign)
    kind = runner.kind_for("benchevolver")
    stage = kind.stages[0]
    done = []
    action = type("Action", (), {"name": stage.name})()
    quick = dataclasses.replace(
        kind,
        load=lambda sid: sid,
        next_action=lambda ctx: action,
        stages=(dataclasses.replace(stage, run=lambda ctx, act: done.append(ctx)),),
    )
    report = runner.advance(kind=quick, stream_id=stream.pk)
    assert report.outcome == "done" and done == [stream.pk]
    assert supervisor.last_progress(campaign) > before


def test_the_beat_schedule_runs_the_supervisor_task_it_names(settings):
    from benchapp.celery import app

    entry = settings.CELERY_BEAT_SCHEDULE["campaign-supervisor"]
    assert entry["task"] == tasks.SUPERVISE_TASK
    assert entry["schedule"] == timedelta(seconds=settings.CAMPAIGN_SUPERVISE_SECONDS)
    app.loader.import_default_modules()
    assert entry["task"] in app.tasks


def test_the_workers_keep_reconnecting_to_the_broker(settings):
    assert settings.CELERY_BROKER_CONNECTION_MAX_RETRIES is None
    assert settings.CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP is True
    assert settings.CELERY_BROKER_TRANSPORT == "benchapp.broker:Transport"


def test_backoff_doubles_up_to_the_cap(settings):
    settings.CAMPAIGN_RETRY_BACKOFF_MAX_SECONDS = 8
    lows = [tasks.backoff_seconds(n) for n in range(6)]
    for delay, base in zip(lows, [1, 2, 4, 8, 8, 8], strict=True):
        assert base <= delay <= base * 1.25


def test_a_step_that_loses_the_database_is_sent_again_with_its_ticket_and_lease(sent, monkeypatch):
    def interrupted(**kwargs):
        raise runner.StepInterrupted("db gone", held="lease-1") from OperationalError("gone")

    monkeypatch.setattr(runner, "advance", interrupted)
    assert tasks.stream_step("benchevolver", 7, "ticket-1", "sandbox") == "retry"
    assert tasks.stream_step("benchevolver", 7, "ticket-1", "sandbox", None, 3) == "retry"
    (name, args, options), (_, _, later) = sent
    assert (name, args) == (lifecycle.STEP_TASK, ("benchevolver", 7, "ticket-1", "sandbox"))
    assert options["kwargs"] == {"held": "lease-1", "attempt": 1}
    assert options["queue"] == "sandbox"
    assert later["kwargs"]["attempt"] == 4 and later["countdown"] > options["countdown"]


def test_a_step_failing_for_another_reason_is_not_retried(monkeypatch, sent):
    def broken(**kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr(runner, "advance", broken)
    with pytest.raises(ValueError):
        tasks.stream_step("benchevolver", 7, "ticket-1")
    assert sent == []


def test_a_tick_that_loses_the_database_is_sent_again_in_its_chain(monkeypatch, sent):
    def down(**kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(runner, "tick", down)
    assert tasks.campaign_tick(5, "chain-token") == "retry"
    [(name, args, options)] = sent
    assert (name, args, options["kwargs"]) == (
        lifecycle.TICK_TASK,
        (5, "chain-token"),
        {"attempt": 1},
    )


def test_a_lost_broker_or_database_connection_is_recognised_through_its_cause():
    import redis
    from kombu.exceptions import OperationalError as KombuOperationalError

    from evolution.llm.errors import LLMError

    assert errors.is_connection_error(OperationalError("x"))
    assert errors.is_connection_error(KombuOperationalError("x"))
    assert errors.is_connection_error(redis.ConnectionError("x"))
    wrapped = LLMError("concurrency limiter: Redis unavailable")
    wrapped.__cause__ = redis.ConnectionError("refused")
    assert errors.is_connection_error(wrapped) and errors.is_infrastructure(wrapped)
    assert not errors.is_connection_error(ValueError("x"))
    assert not errors.is_infrastructure(LLMError("the answer did not parse"))
