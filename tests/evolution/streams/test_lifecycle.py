"""Every campaign transition goes through one module (``evolution.streams.lifecycle``): a
campaign driven by the Celery tick and one driven in-process start and end the same way, and a
resume makes the messages issued before the pause stale for every kind, not only BenchEvolver's
lineages."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest
from django.db import connection, connections, transaction
from django.db.models import F

from evolution.benchevolver.models import GlobalMemoryEntry, Lineage
from evolution.models import Campaign
from evolution.models.campaigns import CampaignState
from evolution.streams import lifecycle, runner
from evolution.streams.kinds import kind_for
from tests.factories import CampaignFactory, CandidateFactory, LineageFactory
from tests.support.fake_openai import FakeOpenAI
from tests.support.workers import other_sessions, wait_for

from .worlds import WORLDS


@pytest.fixture
def fake_server():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def no_messages(monkeypatch):
    sent: list[tuple] = []
    monkeypatch.setattr(lifecycle, "send_task", lambda name, args, **o: sent.append((name, args)))
    return sent


@pytest.mark.django_db(transaction=True)
def test_the_tick_and_the_in_process_runner_start_and_finish_a_campaign_alike(
    fake_server, no_messages
):
    by_tick = WORLDS["reasoning"](fake_server)
    in_process = WORLDS["reasoning"](fake_server)
    for campaign in (by_tick, in_process):
        lifecycle.campaign_launch(campaign_id=campaign.pk)

    runner.tick(campaign_id=by_tick.pk, reschedule=False)
    by_tick.refresh_from_db()
    runner.run_inline(campaign_id=in_process.pk, max_steps=0)
    in_process.refresh_from_db()
    assert by_tick.state == in_process.state == CampaignState.RUNNING
    assert by_tick.state_reason == in_process.state_reason == lifecycle.RUNNING_REASON
    assert by_tick.started_at and in_process.started_at

    # Both end through lifecycle.campaign_finish, with the kind's own label.
    kind = kind_for("reasoning")
    for campaign in (by_tick, in_process):
        assert lifecycle.campaign_finish(kind, campaign) in (
            CampaignState.COMPLETED,
            CampaignState.FAILED,
        )
    by_tick.refresh_from_db()
    in_process.refresh_from_db()
    assert (by_tick.state, by_tick.state_reason) == (in_process.state, in_process.state_reason)
    assert by_tick.finished_at and in_process.finished_at


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind_name", ["reasoning", "xcoder"])
def test_a_resume_makes_every_kinds_queued_messages_stale(fake_server, no_messages, kind_name):
    campaign = WORLDS[kind_name](fake_server)
    lifecycle.campaign_launch(campaign_id=campaign.pk)
    lifecycle.campaign_start(campaign_id=campaign.pk)
    campaign.refresh_from_db()
    kind = kind_for(kind_name)
    stream_ids = runner.active_stream_ids(kind, campaign.pk)
    assert stream_ids
    tickets = {
        i: runner.issue_ticket(kind, i, campaign=campaign, only_if_quiet=False) for i in stream_ids
    }
    assert all(tickets.values())

    lifecycle.campaign_pause(campaign_id=campaign.pk, reason="an admin pauses")
    lifecycle.campaign_resume(campaign_id=campaign.pk)
    lifecycle.campaign_start(campaign_id=campaign.pk)

    # A step message issued before the pause no longer claims its stream.
    for stream_id, ticket in tickets.items():
        assert runner.claim(kind, stream_id, ticket=ticket) is None
    assert set(
        kind.stream_model.objects.filter(pk__in=stream_ids).values_list("ticket", flat=True)
    ) == {""}
    assert Campaign.objects.get(pk=campaign.pk).state == CampaignState.RUNNING


def test_the_lifecycle_imports_neither_the_runner_nor_the_services():
    tree = ast.parse(Path(lifecycle.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            imported.add(f"{'.' * node.level}{node.module or ''}")
            imported.update(f"{node.module}.{a.name}" for a in node.names if node.module)
        elif isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
    assert not {
        name
        for name in imported
        if "runner" in name or "services" in name or name.endswith("tasks")
    }, imported


def _insert_pointing_at(campaign, candidate) -> None:
    GlobalMemoryEntry.objects.create(
        campaign=campaign, candidate=candidate, family="f", summary="s"
    )


def _count_tokens_of(campaign, candidate) -> None:
    Campaign.objects.filter(pk=campaign.pk).update(tokens_in=F("tokens_in") + 1)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("then", [_insert_pointing_at, _count_tokens_of])
def test_a_resume_does_not_deadlock_with_a_step_still_deciding(no_messages, then):
    """A step in flight when its campaign was paused may still be deciding when an admin
    resumes: it holds its lineage and then writes rows that point at the campaign (a global
    memory entry, an accepted problem) or counts a model call's tokens on it. The resume
    rewrites every active lineage's ticket and moves the campaign. Found by the outage test on
    CI as "deadlock detected": the resume held the campaign, then waited for the lineage."""
    campaign = CampaignFactory(state=CampaignState.PAUSED)
    lineage = LineageFactory(campaign=campaign, state="evolving")
    candidate = CandidateFactory(lineage=lineage)
    locked, go = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def step() -> None:
        try:
            with transaction.atomic():
                Lineage.objects.select_for_update().get(pk=lineage.pk)
                locked.set()
                go.wait(30)
                then(campaign, candidate)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    def resume() -> None:
        try:
            lifecycle.campaign_resume(campaign_id=campaign.pk)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    stepping = threading.Thread(target=step)
    stepping.start()
    assert locked.wait(30)
    resuming = threading.Thread(target=resume)
    resuming.start()
    # The resume now waits for the step's lineage; then the step writes its entry.
    wait_for(
        lambda: other_sessions("wait_event_type = 'Lock'") > 0,
        30,
        "the resume waiting for the lineage",
    )
    go.set()
    stepping.join(60)
    resuming.join(60)
    assert not errors, errors
    assert Campaign.objects.get(pk=campaign.pk).state == CampaignState.QUEUED
    assert Lineage.objects.get(pk=lineage.pk).ticket == ""
    if then is _insert_pointing_at:
        assert GlobalMemoryEntry.objects.filter(campaign=campaign).count() == 1
    else:
        assert Campaign.objects.get(pk=campaign.pk).tokens_in == 1


@pytest.mark.django_db(transaction=True)
def test_a_transition_lets_rows_pointing_at_the_campaign_be_written_meanwhile(no_messages):
    """A transition locks the campaign's row only against other writes of it (FOR NO KEY
    UPDATE): a step writing a row that points at the campaign goes on while an admin's pause
    is being committed, instead of waiting for it."""
    campaign = CampaignFactory(state=CampaignState.RUNNING)
    candidate = CandidateFactory(lineage=LineageFactory(campaign=campaign, state="evolving"))
    held, done = threading.Event(), threading.Event()

    def pause() -> None:
        try:
            with transaction.atomic():
                lifecycle.campaign_pause(campaign_id=campaign.pk, reason="an admin pauses")
                held.set()
                done.wait(30)
        finally:
            connections.close_all()

    pausing = threading.Thread(target=pause)
    pausing.start()
    try:
        assert held.wait(30)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '5s'")
            _insert_pointing_at(campaign, candidate)
    finally:
        done.set()
        pausing.join(60)
    assert Campaign.objects.get(pk=campaign.pk).state == CampaignState.PAUSED
    assert GlobalMemoryEntry.objects.filter(campaign=campaign).count() == 1
