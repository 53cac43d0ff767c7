"""kill -9 of a real Celery worker in the middle of a reasoning run: a new worker resumes at
the saved difficulty once the lease expires, and no item is made twice."""

from __future__ import annotations

import signal

import pytest
import redis
from django.conf import settings

from evolution.models import Campaign
from reasoning.models import ReasoningCampaign, ReasoningItem
from tests.support.workers import kill_group, start_worker, wait_for

from .helpers import World, make_campaign

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_a_killed_worker_resumes_at_the_saved_difficulty_without_duplicate_items(fake_server):
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    fake_server.latency = 0.1
    world = World()
    fake_server.responder = world
    types = [{"name": "alpha_type", "description": "a"}, {"name": "beta_type", "description": "b"}]
    campaign = make_campaign(fake_server, reasoning_types=types, difficulty_end=5)

    first = start_worker("reasoning-first", pool_args=("-c", "1", "-P", "solo"), lease_seconds=3)
    try:
        # Well into the run: level 2 closed (state saved), level 3 under way (one step takes
        # a level's cells through their question, answer and verdict: 3 calls of 0.1 s).
        wait_for(
            lambda: ReasoningCampaign.objects.get(pk=campaign.pk).current_difficulty >= 3,
            120,
            "difficulty 3 to start",
        )
    finally:
        kill_group(first)
    rc = ReasoningCampaign.objects.get(pk=campaign.pk)
    saved_at = rc.current_difficulty
    before = {
        item.pk: (item.reasoning_type, item.difficulty, item.question_index, item.question)
        for item in ReasoningItem.objects.filter(reasoning_id=campaign.pk)
    }
    assert Campaign.objects.get(pk=campaign.pk).state == "running"
    assert saved_at >= 3

    second = start_worker("reasoning-second", pool_args=("-c", "1", "-P", "solo"), lease_seconds=3)
    try:
        wait_for(
            lambda: Campaign.objects.get(pk=campaign.pk).state == "completed",
            180,
            "the campaign to complete",
        )
    finally:
        kill_group(second, signal.SIGTERM)

    items = list(ReasoningItem.objects.filter(reasoning_id=campaign.pk))
    cells = [(i.reasoning_type, i.difficulty, i.question_index) for i in items]
    assert len(cells) == len(set(cells)) == 2 * 5
    # Everything made before the kill is still there, unchanged: nothing was redone.
    after = {i.pk: (i.reasoning_type, i.difficulty, i.question_index, i.question) for i in items}
    assert all(after[pk] == value for pk, value in before.items())
    run = ReasoningCampaign.objects.get(pk=campaign.pk).runs.get()
    assert [level["difficulty"] for level in run.levels] == [1, 2, 3, 4, 5]
    assert all(i.status == "judged" for i in items)
    # At most the questions in flight at the kill (one per type of the level, asked side by
    # side) were asked again.
    assert world.generated <= 2 * 5 + 2
