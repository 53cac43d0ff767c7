"""The contract every registered campaign kind keeps, proven on each kind's real stages against
the loopback model server: tickets, leases, the budget, the one failure policy, the in-process
runner, concurrent ticks, and a worker killed with SIGKILL."""

from __future__ import annotations

import dataclasses
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.db import OperationalError, connections
from django.utils import timezone

from evolution.llm.errors import LLMTransportError
from evolution.models import Campaign, LLMCall, StepFailure
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_launch, campaign_resume
from evolution.streams import kinds, runner
from evolution.streams.errors import SandboxFailure
from evolution.streams.kinds import kind_for, registered
from tests.support.fake_openai import UNSUPPORTED_TEMPERATURE, FakeOpenAI, Fault
from tests.support.workers import kill_group, start_worker, wait_for

from .worlds import WORLDS

pytestmark = pytest.mark.django_db(transaction=True)

KINDS = sorted(k.name for k in registered())


@pytest.fixture
def fake_server():
    with FakeOpenAI() as server:
        yield server


def build(kind_name: str, server: FakeOpenAI, *, state=CampaignState.RUNNING) -> Campaign:
    campaign = WORLDS[kind_name](server)
    campaign_launch(campaign_id=campaign.pk)
    if state == CampaignState.RUNNING:
        Campaign.objects.filter(pk=campaign.pk).update(state=state, tick_token="chain-1")
    return Campaign.objects.get(pk=campaign.pk)


def first_stream(kind, campaign: Campaign) -> int:
    return runner.active_stream_ids(kind, campaign.pk)[0]


def stream(kind, stream_id: int):
    return kind.stream_model.objects.get(pk=stream_id)


def units(kind, campaign: Campaign) -> dict[int, str]:
    """Every unit of the campaign and its state."""
    stream_ids = kind.stream_model.objects.filter(campaign_id=campaign.pk).values("pk")
    fk = next(
        f.name
        for f in kind.unit_model._meta.get_fields()
        if getattr(f, "related_model", None) is kind.stream_model and f.many_to_one
    )
    return dict(
        kind.unit_model.objects.filter(**{f"{fk}__in": stream_ids}).values_list(
            "pk", kind.unit_state_field
        )
    )


def given_up(kind, campaign: Campaign) -> set[int]:
    retired = kind.unit_model.objects.filter(kind.given_up).values_list("pk", flat=True)
    return set(retired) & set(units(kind, campaign))


def drive_to_unit_step(kind, stream_id: int, limit: int = 60):
    """Advance with the real stages until the next action works on a unit; return it."""
    for _ in range(limit):
        action = kind.next_action(kind.load(stream_id))
        assert action is not None, "the stream finished before any unit step"
        if kind.unit_of(action):
            return action
        report = runner.advance(kind=kind.name, stream_id=stream_id)
        assert report.outcome == "done", report
    raise AssertionError("no unit step within the limit")


def replace_stage(monkeypatch, kind, name: str, run) -> None:
    stages = tuple(dataclasses.replace(s, run=run) if s.name == name else s for s in kind.stages)
    monkeypatch.setitem(kinds._KINDS, kind.name, dataclasses.replace(kind, stages=stages))


def test_every_registered_kind_has_a_contract_world():
    assert set(KINDS) == set(WORLDS)
    assert {"benchevolver", "reasoning", "xcoder", "evosyn", "frontiersmith"} <= set(KINDS)


@pytest.mark.parametrize("kind_name", KINDS)
def test_a_stale_ticket_is_skipped(kind_name, fake_server):
    kind = kind_for(kind_name)
    campaign = build(kind_name, fake_server)
    sid = first_stream(kind, campaign)
    ticket = runner.issue_ticket(kind, sid, campaign=campaign, only_if_quiet=False)

    report = runner.advance(kind=kind_name, stream_id=sid, ticket="an-older-ticket")
    assert report.outcome == "skipped"
    assert stream(kind, sid).steps_done == 0
    assert not LLMCall.objects.filter(campaign_id=campaign.pk).exists()

    report = runner.advance(kind=kind_name, stream_id=sid, ticket=ticket)
    assert (report.outcome, bool(report.action)) == ("done", True)
    assert stream(kind, sid).steps_done == 1


@pytest.mark.parametrize("kind_name", KINDS)
def test_an_expired_lease_is_reclaimed_by_another_worker(kind_name, fake_server):
    kind = kind_for(kind_name)
    campaign = build(kind_name, fake_server)
    sid = first_stream(kind, campaign)
    rows = kind.stream_model.objects.filter(pk=sid)
    now = timezone.now()

    rows.update(lease_token="dead-worker", leased_until=now + timedelta(seconds=60))
    assert runner.claim(kind, sid) is None
    assert runner.advance(kind=kind_name, stream_id=sid).outcome == "skipped"

    rows.update(leased_until=now - timedelta(seconds=1))  # the dead worker's lease ran out
    token = runner.claim(kind, sid)
    assert token and token != "dead-worker"
    assert stream(kind, sid).lease_token == token
    runner.release(kind, sid, token)
    assert stream(kind, sid).lease_token == ""


@pytest.mark.parametrize("kind_name", KINDS)
def test_the_budget_pauses_the_campaign_and_retires_nothing(kind_name, fake_server):
    kind = kind_for(kind_name)
    campaign = WORLDS[kind_name](fake_server)
    Campaign.objects.filter(pk=campaign.pk).update(budget_max_calls=1)
    campaign_launch(campaign_id=campaign.pk)

    result = runner.run_inline(campaign_id=campaign.pk, workers=1, max_steps=40)

    assert result.state == CampaignState.PAUSED
    assert result.state_reason.startswith("budget reached")
    assert not given_up(kind, result)
    assert runner.active_stream_ids(kind, campaign.pk)  # resumable where it stopped


@pytest.mark.parametrize("kind_name", KINDS)
def test_an_infrastructure_failure_pauses_after_the_retry_limit_and_retires_nothing(
    kind_name, fake_server, monkeypatch
):
    kind = kind_for(kind_name)
    campaign = build(kind_name, fake_server)
    sid = first_stream(kind, campaign)
    action = drive_to_unit_step(kind, sid)
    before = units(kind, campaign)
    # The sandbox, the database and a model endpoint, each down in turn.
    outages = iter(
        [
            SandboxFailure("bwrap: setting up uid map: Permission denied"),
            OperationalError("server closed the connection unexpectedly"),
            LLMTransportError("endpoint unreachable after 3 tries", status=None, tries=3),
        ]
    )

    def down(ctx, act):
        raise next(outages)

    replace_stage(monkeypatch, kind, action.name, down)
    for _ in range(runner.MAX_CONSECUTIVE_ERRORS - 1):
        assert runner.advance(kind=kind_name, stream_id=sid).outcome == "error"
        assert Campaign.objects.get(pk=campaign.pk).state == CampaignState.RUNNING
    assert runner.advance(kind=kind_name, stream_id=sid).outcome == "error"

    campaign.refresh_from_db()
    assert campaign.state == CampaignState.PAUSED
    assert campaign.state_reason.startswith("infrastructure failure")
    assert units(kind, campaign) == before  # no unit failed, retired or moved
    assert sid in runner.active_stream_ids(kind, campaign.pk)
    assert stream(kind, sid).consecutive_errors == 0
    # Each failure is kept with its traceback for the workers page, and what it led to.
    failures = list(StepFailure.objects.filter(campaign=campaign).order_by("id"))
    assert [(f.kind, f.stream_id, f.action, f.attempt) for f in failures] == [
        (kind_name, sid, action.name, n) for n in (1, 2, 3)
    ]
    assert all(f.infrastructure for f in failures)
    assert [f.consequence for f in failures] == ["retried", "retried", "paused"]
    assert "raise next(outages)" in failures[0].traceback
    assert (
        failures[0]
        .traceback.rstrip()
        .endswith("SandboxFailure: bwrap: setting up uid map: Permission denied")
    )
    assert failures[2].error.startswith("LLMTransportError: endpoint unreachable")
    # Resumed after the outage, the same step on the same unit is next: nothing was skipped.
    campaign_resume(campaign_id=campaign.pk)
    again = kind.next_action(kind.load(sid))
    assert (again.name, kind.unit_of(again)) == (action.name, kind.unit_of(action))


@pytest.mark.parametrize("kind_name", KINDS)
def test_an_item_error_gives_up_on_the_item_only_after_the_retry_limit(
    kind_name, fake_server, monkeypatch
):
    kind = kind_for(kind_name)
    campaign = build(kind_name, fake_server)
    sid = first_stream(kind, campaign)
    action = drive_to_unit_step(kind, sid)
    unit = kind.unit_of(action)
    before = units(kind, campaign)
    assert not given_up(kind, campaign)

    def malformed(ctx, act):
        raise ValueError("the answer holds no parsable block")

    replace_stage(monkeypatch, kind, action.name, malformed)
    for _ in range(runner.MAX_CONSECUTIVE_ERRORS - 1):
        assert runner.advance(kind=kind_name, stream_id=sid).outcome == "error"
        assert not given_up(kind, campaign)
    assert runner.advance(kind=kind_name, stream_id=sid).outcome == "error"

    retired = given_up(kind, campaign)
    if unit in before:
        assert retired == {unit}
    else:  # the step creates its unit (a reasoning cell's item): the one given up is that new row
        assert len(retired) == 1 and retired.isdisjoint(before), (retired, before)
    failures = list(StepFailure.objects.filter(campaign=campaign).order_by("id"))
    assert [f.consequence for f in failures] == ["retried", "retried", "gave_up"]
    assert not any(f.infrastructure for f in failures)
    assert (
        failures[-1].traceback.rstrip().endswith("ValueError: the answer holds no parsable block")
    )
    campaign.refresh_from_db()
    assert campaign.state == CampaignState.RUNNING  # the campaign goes on without the item
    row = stream(kind, sid)
    assert getattr(row, "state", "") != "failed" and row.consecutive_errors == 0
    following = kind.next_action(kind.load(sid))
    assert following is None or kind.unit_of(following) != unit


@pytest.mark.parametrize(
    ("fault", "why"),
    [
        (Fault.http_status(401, '{"error": "bad key"}'), "HTTP 401 (the API key"),
        (
            Fault.http_status(400, UNSUPPORTED_TEMPERATURE % 0.7),
            "HTTP 400 (the parameter 'temperature' is refused",
        ),
    ],
    ids=["401", "400-temperature"],
)
@pytest.mark.parametrize("kind_name", KINDS)
def test_an_endpoint_refusing_its_configuration_pauses_at_the_first_refusal(
    kind_name, fake_server, fault, why
):
    """Every kind: a model endpoint of the campaign that refuses its own configuration (a key,
    a parameter) pauses the campaign at the first refusal, naming the role, the endpoint and
    the status; asking again cannot help, and no item is blamed or given up. (Before the
    reasoning, X-Coder, EvoSyn and FrontierSmith kinds paused on such a refusal, a 4xx was the
    item's error, given up after three steps.)"""
    kind = kind_for(kind_name)
    campaign = build(kind_name, fake_server)
    sid = first_stream(kind, campaign)
    # BenchEvolver's panel and faithfulness solvers measure: their failed calls are the
    # measurement's infrastructure errors, with a policy of their own (asked again, then the
    # campaign paused naming the endpoints; tests/evolution/benchevolver). Every other call of every
    # kind is refused.
    measuring = {"solver", "faithfulness"} if kind_name == "benchevolver" else set()
    world = fake_server.responder
    fake_server._queues.clear()  # the world's scripted answers, too

    def refuse(body, headers):
        if headers.get("x-benchforge-role") in measuring:
            return world(body, headers)
        return fault

    fake_server.responder = refuse

    for _ in range(60):  # steps before the first model call (if any) go on
        report = runner.advance(kind=kind_name, stream_id=sid)
        if report.outcome != "done":
            break
    assert report.outcome == "error", report

    campaign.refresh_from_db()
    assert campaign.state == CampaignState.PAUSED
    reason = campaign.state_reason
    assert reason.startswith("endpoint configuration (") and why in reason, reason
    refused = LLMCall.objects.filter(campaign_id=campaign.pk, status="error").first()
    assert refused is not None and f"{refused.role} endpoint " in reason
    assert f"'{refused.endpoint_name}' refused the request" in reason
    assert not given_up(kind, campaign)
    failures = list(StepFailure.objects.filter(campaign=campaign))
    assert [(f.consequence, f.infrastructure) for f in failures] == [("paused", True)]
    assert sid in runner.active_stream_ids(kind, campaign.pk)  # resumable once it is fixed


@pytest.mark.parametrize("kind_name", KINDS)
def test_run_inline_reports_a_campaign(kind_name, fake_server):
    campaign = build(kind_name, fake_server, state=CampaignState.QUEUED)
    seen: list = []

    result = runner.run_inline(campaign_id=campaign.pk, max_steps=2, on_progress=seen.append)

    assert isinstance(result, Campaign) and result.pk == campaign.pk
    assert result.state == CampaignState.RUNNING  # stopped by max_steps: workers take over
    assert seen and all(isinstance(c, Campaign) and c.pk == campaign.pk for c in seen)


@pytest.mark.parametrize("kind_name", KINDS)
def test_two_concurrent_ticks_issue_one_ticket(kind_name, fake_server, monkeypatch):
    kind = kind_for(kind_name)
    campaign = build(kind_name, fake_server)
    sent: list[tuple[int, str]] = []
    monkeypatch.setattr(
        runner, "enqueue_step", lambda name, sid, ticket, queue: sent.append((sid, ticket))
    )
    barrier = threading.Barrier(2)

    def tick(_):
        barrier.wait()
        try:
            return runner.tick(campaign_id=campaign.pk, token="chain-1", reschedule=False)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(tick, range(2)))

    assert results == [CampaignState.RUNNING, CampaignState.RUNNING]
    streams = runner.active_stream_ids(kind, campaign.pk)
    assert sorted(sid for sid, _ in sent) == streams  # one ticket per stream, not two
    for sid, ticket in sent:
        assert stream(kind, sid).ticket == ticket


@pytest.mark.slow
@pytest.mark.parametrize("kind_name", KINDS)
def test_a_sigkilled_worker_loses_at_most_the_step_in_flight(kind_name, fake_server):
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    fake_server.latency = 0.05
    kind = kind_for(kind_name)
    campaign = build(kind_name, fake_server, state=CampaignState.QUEUED)

    def steps() -> int:
        return sum(
            kind.stream_model.objects.filter(campaign_id=campaign.pk).values_list(
                "steps_done", flat=True
            )
        )

    pool = ("-c", "1", "-P", "solo")
    first = start_worker(f"{kind_name}-first", pool_args=pool, lease_seconds=3)
    try:
        wait_for(lambda: steps() >= 3, 180, "three steps")
    finally:
        kill_group(first)  # SIGKILL, most likely in the middle of a step
    before = units(kind, campaign)
    done_before = steps()
    assert Campaign.objects.get(pk=campaign.pk).state == CampaignState.RUNNING

    second = start_worker(f"{kind_name}-second", pool_args=pool, lease_seconds=3)
    try:
        wait_for(
            lambda: Campaign.objects.get(pk=campaign.pk).state == CampaignState.COMPLETED,
            300,
            "the campaign to complete",
        )
    finally:
        kill_group(second, signal.SIGTERM)

    after = units(kind, campaign)
    assert set(before) <= set(after)  # nothing made before the kill was lost or remade
    assert steps() > done_before
    assert not given_up(kind, Campaign.objects.get(pk=campaign.pk))
    for row in kind.stream_model.objects.filter(campaign_id=campaign.pk):
        assert row.consecutive_errors == 0 and row.lease_token == ""
