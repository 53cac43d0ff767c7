"""Releases' background jobs pause or heal, never stall, with real processes: Celery workers, a
real `celery beat` running the job supervisor, and a Redis server the test owns (crashed: every
queued message is lost). Each test evaluates the crafted frozen release (3 problems) on the
loopback model server, whose request count proves that no sample was asked twice."""

from __future__ import annotations

import signal
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from evolution.models import ModelEndpoint
from releases import leaderboard
from releases.models import LeaderboardRun, LeaderboardSample, RunState
from releases.tasks import enqueue_leaderboard_run
from tests.support.answers import fenced
from tests.support.fake_openai import FakeOpenAI
from tests.support.outage import RedisServer, alive, celery_broker, env_with, start_beat
from tests.support.workers import kill_group, start_worker, wait_for, worker_env

from .builders import SUM_CODE
from .helpers import frozen_release

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


class Stack:
    """Workers and beat against the test's Redis, with short supervision periods."""

    SETTINGS = {
        "JOB_SUPERVISE_SECONDS": 1,
        "JOB_HEARTBEAT_SECONDS": 0.5,
        "JOB_LOST_SECONDS": 4,
        "JOB_RESEND_SECONDS": 3,
        "CAMPAIGN_SUPERVISE_SECONDS": 0,
    }

    def __init__(self, broker: RedisServer, logs):
        self.broker, self.logs, self.procs = broker, logs, []

    def env(self) -> dict:
        return env_with(worker_env(), REDIS_URL=self.broker.url, **self.SETTINGS)

    def worker(self, name: str, pool=("-P", "solo")):
        proc = start_worker(
            name,
            pool_args=pool,
            queues="default",
            env=self.env(),
            log_path=self.logs / f"{name}.log",
        )
        self.procs.append(proc)
        return proc

    def beat(self):
        proc = start_beat(self.env(), self.logs)
        self.procs.append(proc)
        return proc

    def log(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        for proc in self.procs:
            kill_group(proc, signal.SIGKILL)


@pytest.fixture
def stack(tmp_path):
    with RedisServer() as broker, celery_broker(broker.url):
        s = Stack(broker, tmp_path)
        try:
            yield s
        finally:
            s.stop()


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        fake.responder = lambda body, headers: fenced(SUM_CODE)
        yield fake


def _endpoint(server) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name="model-x",
        provider="openai",
        base_url=server.base_url,
        model="model-x",
        concurrency_limit=1,
        timeout_s=30,
        max_retries=0,
        release_date=(timezone.now() - timedelta(days=1)).date(),
    )


def _settled(run_id: int) -> LeaderboardRun | None:
    run = LeaderboardRun.objects.get(pk=run_id)
    return run if run.state in (RunState.COMPLETED, RunState.FAILED) else None


def _samples(run) -> int:
    return LeaderboardSample.objects.filter(run=run).count()


def test_a_run_whose_message_died_with_redis_is_sent_again_by_beat(stack, server):
    """The run is queued and its message published while no worker runs; Redis crashes and
    comes back empty. Beat's job supervisor sends the message again; the run completes with
    every sample asked exactly once."""
    _, release = frozen_release()
    with transaction.atomic():
        run = leaderboard.run_create(release=release, endpoint=_endpoint(server), samples=2)
        enqueue_leaderboard_run(run.pk)
    assert LeaderboardRun.objects.get(pk=run.pk).sent_at is not None  # published
    stack.broker.kill()
    stack.broker.start()  # the message is gone

    worker = stack.worker("models")
    stack.beat()
    run = wait_for(lambda: _settled(run.pk), 300, "the run to settle")
    assert run.state == RunState.COMPLETED, run.error + stack.log("models")[-3000:]
    assert alive(worker)
    expected = release.item_count * 2
    assert _samples(run) == server.request_count == expected
    assert "message re-sent" in run.recovery


def test_two_messages_for_one_run_run_it_once(stack, server):
    """A late duplicate (the original message and the supervisor's re-send both delivered):
    two worker processes take one message each; the second finds the run held and does
    nothing, so each sample is asked once."""
    from celery import current_app

    server.latency = 0.3  # long enough for the two messages to overlap
    _, release = frozen_release()
    run = leaderboard.run_create(release=release, endpoint=_endpoint(server), samples=2)
    stack.worker("pool", pool=("-c", "2"))
    for _ in range(2):
        current_app.send_task("releases.tasks.leaderboard_run", (run.pk,))
    run = wait_for(lambda: _settled(run.pk), 300, "the run to settle")
    assert run.state == RunState.COMPLETED, run.error + stack.log("pool")[-3000:]
    expected = release.item_count * 2
    assert _samples(run) == server.request_count == expected


def test_a_run_whose_worker_was_killed_is_taken_back_and_completed(stack, server):
    """The worker running the evaluation is killed (SIGKILL, its pool and heartbeat with it).
    Beat's job supervisor sees the heartbeat stop, queues the run again and sends its message;
    another worker completes it. Every (problem, sample) is stored once, and at most the one
    call in flight at the kill is asked again."""
    server.latency = 0.5
    _, release = frozen_release()
    with transaction.atomic():
        run = leaderboard.run_create(release=release, endpoint=_endpoint(server), samples=4)
        enqueue_leaderboard_run(run.pk)
    first = stack.worker("first")
    wait_for(lambda: _samples(run) >= 3, 240, "samples before the kill")
    assert LeaderboardRun.objects.get(pk=run.pk).state == RunState.RUNNING
    kill_group(first, signal.SIGKILL)
    killed_at = server.request_count

    stack.worker("second")
    stack.beat()
    run = wait_for(lambda: _settled(run.pk), 300, "the run to settle")
    assert run.state == RunState.COMPLETED, run.error + stack.log("second")[-3000:]
    expected = release.item_count * 4
    assert _samples(run) == expected
    assert killed_at <= server.request_count <= expected + 1
    assert run.lost_workers == 1
    assert "re-queued by the supervisor" in run.recovery
    assert "its worker stopped heartbeating" in run.recovery
