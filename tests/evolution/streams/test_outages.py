"""Outages pause or heal, never stall: real worker processes, a real `celery beat` running the
supervisor, a Redis server the test owns (crashed and started again mid-campaign) and a proxy
that makes PostgreSQL refuse the workers' connections for 10 s and for 60 s (the shared server
keeps serving everyone else).

Every campaign is the demo pack's two-seed BenchEvolver campaign against the loopback model
server: its decisions are fixed by the scripted answers, so after the outage the campaign must
end with exactly the decisions, attempts and problems of a clean in-process run of the same
campaign (nothing lost, no unit made twice), every request the model server received must be
in the ledger once, and every successful call of the clean run must be there. The only extra
requests allowed are the calls of the one step the outage cut, which is done again (the same
bound as for a worker killed with SIGKILL).
"""

from __future__ import annotations

import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from evolution.benchevolver.demo import pack
from evolution.benchevolver.models import Candidate, SolverAttempt
from evolution.benchevolver.services import campaign_create
from evolution.models import Campaign, LLMCall, Problem
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_launch, campaign_resume
from evolution.streams import runner
from tests.evolution.benchevolver.helpers import KeyedResponder, build_world, truncate_engine_tables
from tests.support.fake_openai import FakeOpenAI
from tests.support.outage import (
    RedisServer,
    RefusingProxy,
    alive,
    celery_broker,
    env_with,
    start_beat,
)
from tests.support.workers import kill_group, start_worker, wait_for, worker_env

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SEEDS = ("demo/array-sum", "demo/pair-count")
EXPECTED_DECISIONS = {
    "demo/array-sum": ["accepted", "accepted"],
    "demo/pair-count": ["accepted", "judge_rejected", "duplicate"],
}
_reference: dict = {}


@pytest.fixture
def fake_server():
    with FakeOpenAI() as server:
        server.responder = KeyedResponder(pack.responses())
        yield server


def make_campaign(server: FakeOpenAI) -> Campaign:
    seed_set, evolver, panel = build_world(server, seeds=SEEDS)
    return campaign_create(
        name="outage", seed_set=seed_set, evolver=evolver, panel=panel, settings=pack.DEMO_SETTINGS
    )


def ledger(campaign: Campaign) -> Counter:
    """The successful model calls, by seed, candidate round and role."""
    rows = LLMCall.objects.filter(campaign=campaign, status=LLMCall.Status.OK).values_list(
        "lineage__seed__origin_id", "candidate__round", "role"
    )
    return Counter(rows)


def reference_ledger(server: FakeOpenAI) -> Counter:
    """The ledger of a clean in-process run of the same campaign (computed once)."""
    if "ledger" not in _reference:
        campaign = make_campaign(server)
        Campaign.objects.filter(pk=campaign.pk).update(state=CampaignState.QUEUED)
        done = runner.run_inline(campaign_id=campaign.pk)
        assert done.state == CampaignState.COMPLETED
        _reference["ledger"] = ledger(done)
        truncate_engine_tables()
    return _reference["ledger"]


# One step: a panel measurement, 2 models x 4 samples.
CALLS_PER_STEP = 8


def assert_clean_outcome(
    campaign: Campaign, expected_ledger: Counter, server: FakeOpenAI, requests_before: int
) -> None:
    campaign.refresh_from_db()
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    for seed, decisions in EXPECTED_DECISIONS.items():
        lineage = campaign.lineages.get(seed__origin_id=seed)
        got = list(lineage.candidates.order_by("round").values_list("decision", flat=True))
        assert got == decisions, seed
        rounds = list(lineage.candidates.values_list("round", flat=True))
        assert len(rounds) == len(set(rounds)), f"{seed}: a round was made twice"
    # Exactly K attempts per model per measured candidate and per seed: nothing twice.
    for cand in Candidate.objects.filter(lineage__campaign=campaign).exclude(passes=None):
        assert cand.solver_attempts.count() == 8, cand
    assert SolverAttempt.objects.filter(candidate__isnull=True).count() == 16
    assert Problem.objects.filter(kind="evolved").count() == 3
    # The ledger: one row per request the server received (retries inside a call counted in
    # its row's tries), every successful call of the clean run, and nothing more than the
    # calls of the step in flight when the outage struck done again.
    rows = LLMCall.objects.filter(campaign=campaign)
    # A row still "sent" (tries 0) is a request whose answer the outage kept from the ledger.
    logged = sum(max(1, tries) for tries in rows.values_list("tries", flat=True))
    statuses = Counter(rows.values_list("status", flat=True))
    assert logged == server.request_count - requests_before, statuses
    got = ledger(campaign)
    assert not (expected_ledger - got), "a call of the clean run is missing from the ledger"
    redone = got - expected_ledger
    assert sum(redone.values()) <= CALLS_PER_STEP, redone


class Stack:
    """The processes of one test: workers and beat against the test's Redis and, for the
    database, the refusing proxy."""

    def __init__(self, broker: RedisServer, proxy: RefusingProxy, logs: Path):
        self.broker = broker
        self.proxy = proxy
        self.logs = logs
        self.procs: list = []

    def env(self, **overrides) -> dict:
        base = worker_env(lease_seconds=30)
        db_name = base["DATABASE_URL"].rsplit("/", 1)[1]
        settings = {
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:{self.proxy.port}/{db_name}",
            "REDIS_URL": self.broker.url,
            "CAMPAIGN_TICK_SECONDS": 0.5,
            "CAMPAIGN_SUPERVISE_SECONDS": 1,
            "CAMPAIGN_QUIET_SECONDS": 5,
            "CAMPAIGN_RETRY_BACKOFF_MAX_SECONDS": 4,
            "CAMPAIGN_STALL_SECONDS": 0,
        }
        return env_with(base, **{**settings, **overrides})

    def worker(self, name: str, *, queues: str, pool: tuple[str, ...], **overrides):
        proc = start_worker(
            name,
            pool_args=pool,
            queues=queues,
            env=self.env(**overrides),
            log_path=self.logs / f"{name}.log",
        )
        self.procs.append(proc)
        return proc

    def beat(self, **overrides):
        proc = start_beat(self.env(**overrides), self.logs)
        self.procs.append(proc)
        return proc

    def log(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        for proc in self.procs:  # nothing of theirs is needed any more: no warm shutdown
            kill_group(proc, signal.SIGKILL)


@pytest.fixture
def stack(tmp_path):
    with RedisServer() as broker, RefusingProxy() as proxy, celery_broker(broker.url):
        s = Stack(broker, proxy, tmp_path)
        try:
            yield s
        finally:
            s.stop()


def attempts(campaign: Campaign) -> int:
    return SolverAttempt.objects.filter(candidate__lineage__campaign=campaign).count()


def state(campaign: Campaign) -> str:
    return Campaign.objects.values_list("state", flat=True).get(pk=campaign.pk)


def test_a_redis_crash_mid_campaign_heals_without_duplicates(stack, fake_server):
    """The broker is killed (every queued message is lost) and comes back empty 5 s later: the
    workers (the documented model worker with a thread pool, and a prefork sandbox worker)
    reconnect instead of exiting, the supervisor restarts the lost tick chain, and the campaign
    completes as a clean run does."""
    expected = reference_ledger(fake_server)
    requests_before = fake_server.request_count
    fake_server.latency = 0.05
    campaign = make_campaign(fake_server)
    models = stack.worker("models", queues="default", pool=("-c", "4", "-P", "threads"))
    sandbox = stack.worker("sandbox", queues="sandbox", pool=("-c", "1"))
    stack.beat()
    campaign_launch(campaign_id=campaign.pk)
    wait_for(lambda: attempts(campaign) >= 4, 240, "panel attempts before the crash")

    stack.broker.kill()
    time.sleep(5)
    stack.broker.start()

    wait_for(lambda: state(campaign) == CampaignState.COMPLETED, 300, "the campaign to complete")
    assert alive(models), stack.log("models")[-3000:]
    assert alive(sandbox), stack.log("sandbox")[-3000:]
    assert_clean_outcome(campaign, expected, fake_server, requests_before)


def test_the_database_refusing_the_workers_heals_after_10_s_and_pauses_after_60_s(
    stack, fake_server
):
    """One campaign, two outages. Mid-campaign the database refuses every worker connection
    for 10 s (open ones are cut): steps and ticks retry with backoff and the campaign goes on.
    Later it refuses them for 60 s, longer than CAMPAIGN_STALL_SECONDS (35 s here): once the
    database answers again the supervisor pauses the campaign, naming how long it made no
    progress; resumed, it completes as a clean run does."""
    expected = reference_ledger(fake_server)
    requests_before = fake_server.request_count
    fake_server.latency = 0.05
    campaign = make_campaign(fake_server)
    worker = stack.worker(
        "all",
        queues="default,sandbox",
        pool=("-c", "4", "-P", "threads"),
        CAMPAIGN_STALL_SECONDS=35,
    )
    stack.beat()
    campaign_launch(campaign_id=campaign.pk)
    wait_for(lambda: attempts(campaign) >= 4, 240, "panel attempts before the first outage")

    stack.proxy.outage()
    time.sleep(10)
    stack.proxy.restore()
    healed = attempts(campaign)
    wait_for(lambda: attempts(campaign) >= healed + 8, 240, "progress after the 10 s outage")
    assert state(campaign) == CampaignState.RUNNING  # healed, not paused
    assert stack.proxy.cut > 0  # the workers' connections really were cut
    assert "retrying" in stack.log("all")

    # Slow answers from here on keep the campaign from finishing before the second outage
    # ends, and let no step complete before the supervisor's first pass after it.
    fake_server.latency = 4
    stack.proxy.outage()
    time.sleep(60)
    stack.proxy.restore()
    wait_for(lambda: state(campaign) == CampaignState.PAUSED, 60, "the supervisor's pause")
    fake_server.latency = 0.05
    paused = Campaign.objects.get(pk=campaign.pk)
    assert paused.state_reason.startswith("no progress for ")
    assert "CAMPAIGN_STALL_SECONDS=35" in paused.state_reason

    campaign_resume(campaign_id=campaign.pk)
    wait_for(lambda: state(campaign) == CampaignState.COMPLETED, 300, "the campaign to complete")
    assert alive(worker), stack.log("all")[-3000:]
    assert_clean_outcome(campaign, expected, fake_server, requests_before)
