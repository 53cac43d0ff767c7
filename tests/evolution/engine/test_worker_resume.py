"""kill -9 of a real Celery worker in the middle of a campaign loses at most the step in flight:
a new worker takes over once the leases expire, and nothing is duplicated."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection

from evolution.demo import pack
from evolution.models import Campaign, Candidate, Problem, SolverAttempt
from evolution.services.campaigns import campaign_create, campaign_launch

from .conftest import KeyedResponder, build_world

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[3]


def worker_env() -> dict:
    db = connection.settings_dict
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
        BROKER_KIND="redis",
        REDIS_URL=settings.REDIS_URL,
        CAMPAIGN_TICK_SECONDS="0.5",
        LINEAGE_LEASE_SECONDS="4",
        SECRET_KEY="test",
        DEBUG="0",
        DJANGO_SETTINGS_MODULE="benchapp.settings",
    )
    return env


def start_worker(name: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "benchapp",
            "worker",
            "-Q",
            "default,sandbox",
            "-c",
            "2",
            "-n",
            f"{name}@%h",
            "--loglevel",
            "WARNING",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=ROOT,
        env=worker_env(),
        start_new_session=True,  # its own process group: kill -9 takes the pool children too
    )


def kill_group(proc: subprocess.Popen, sig=signal.SIGKILL) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        return
    proc.wait(timeout=30)


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_killed_worker_loses_nothing_and_duplicates_nothing(fake_server):
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    fake_server.responder = KeyedResponder(pack.responses())
    seed_set, evolver, panel = build_world(fake_server, seeds=("demo/array-sum", "demo/pair-count"))
    campaign = campaign_create(
        name="kill", seed_set=seed_set, evolver=evolver, panel=panel, settings=pack.DEMO_SETTINGS
    )
    campaign_launch(campaign_id=campaign.pk)

    first = start_worker("first")
    try:
        # Let it get well into the campaign: some candidate measured by the panel.
        wait_for(
            lambda: SolverAttempt.objects.filter(candidate__isnull=False).count() >= 4,
            180,
            "panel attempts",
        )
    finally:
        kill_group(first)
    before = {
        "candidates": Candidate.objects.count(),
        "attempts": SolverAttempt.objects.count(),
    }
    assert Campaign.objects.get(pk=campaign.pk).state == "running"

    second = start_worker("second")
    try:
        wait_for(
            lambda: Campaign.objects.get(pk=campaign.pk).state == "completed",
            300,
            "the campaign to complete",
        )
    finally:
        kill_group(second, signal.SIGTERM)

    assert Candidate.objects.count() >= before["candidates"]
    array = campaign.lineages.get(seed__origin_id="demo/array-sum")
    pairs = campaign.lineages.get(seed__origin_id="demo/pair-count")
    assert list(array.candidates.order_by("round").values_list("decision", flat=True)) == [
        "accepted",
        "accepted",
    ]
    assert list(pairs.candidates.order_by("round").values_list("decision", flat=True)) == [
        "accepted",
        "judge_rejected",
        "duplicate",
    ]
    # Exactly K attempts per model per measured candidate and per seed: nothing twice.
    for cand in Candidate.objects.filter(lineage__campaign=campaign).exclude(passes=None):
        assert cand.solver_attempts.count() == 8, cand
    assert SolverAttempt.objects.filter(candidate__isnull=True).count() == 16
    assert Problem.objects.filter(kind="evolved").count() == 3
    assert sorted(array.candidates.values_list("round", flat=True)) == [1, 2]
