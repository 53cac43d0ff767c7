"""kill -9 of a real Celery worker in the middle of a campaign loses at most the step in flight:
a new worker takes over once the leases expire, and nothing is duplicated."""

from __future__ import annotations

import signal

import pytest
import redis
from django.conf import settings

from evolution.benchevolver.demo import pack
from evolution.benchevolver.models import Candidate, SolverAttempt
from evolution.benchevolver.services import campaign_create
from evolution.models import Campaign, Problem
from evolution.services.campaigns import campaign_launch
from tests.support.workers import kill_group, start_worker, wait_for

from .helpers import KeyedResponder, build_world

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


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
