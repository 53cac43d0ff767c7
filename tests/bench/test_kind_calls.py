"""The EvoSyn and reasoning set-ups of ``bench_kind_calls`` run: each campaign, answered by the
benchmark's authored answers (``bench.loopback_answers``) over the loopback server, goes to its
end with every call answered, and a step asks several waves of calls side by side."""

from __future__ import annotations

import pytest

from bench import bench_kind_calls, loopback_answers
from evolution.models import Campaign, LLMCall
from evolution.models.campaigns import CampaignState
from evolution.streams.runner import run_inline
from tests.support.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db(transaction=True)  # the fan-out's threads see committed rows


@pytest.fixture
def server():
    # Each answer takes 0.2 s: long enough that a step's eight calls overlap even when a loaded
    # machine (load 10) starts its threads late (at 0.02 s one wave reached 7 of 8).
    with FakeOpenAI() as fake:
        fake.latency = 0.2
        yield fake


def _run(world, server, responder) -> Campaign:
    server.responder = responder
    campaign = world(server.base_url, 8, True)
    return run_inline(campaign_id=campaign.pk, max_steps=200)


def test_the_evosyn_setup_runs_to_kept_problems_with_every_call_answered(server):
    from evosyn.models import Instance

    campaign = _run(bench_kind_calls.evosyn_world, server, loopback_answers.EvoSyn())
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    calls = LLMCall.objects.filter(campaign_id=campaign.pk)
    assert calls.exclude(status="ok").count() == 0
    # The seed's 16 + 16, two strategist calls, 8 problems with 16 + 16 each.
    assert calls.count() == 32 + 2 + 8 * (1 + 32)
    statuses = list(
        Instance.objects.filter(evosyn_id=campaign.pk, role="synthetic").values_list(
            "status", flat=True
        )
    )
    assert statuses.count("kept") == 8
    assert server.max_in_flight == 8


def test_the_reasoning_setup_runs_every_level_with_every_call_answered(server):
    from reasoning.models import ReasoningItem

    campaign = _run(bench_kind_calls.reasoning_world, server, loopback_answers.Reasoning())
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    items = ReasoningItem.objects.filter(reasoning_id=campaign.pk)
    # Five levels (--quick) x eight reasoning types, each generated, answered, judged by three.
    assert items.count() == 40
    assert set(items.values_list("status", flat=True)) == {"judged"}
    # Seat 0 dissents on some questions: the panel's majority still says correct.
    assert items.filter(disagreement=True).exists()
    assert set(items.values_list("judge_score", flat=True)) == {1.0}
    calls = LLMCall.objects.filter(campaign_id=campaign.pk)
    assert calls.count() == 40 * (1 + 1 + 3)
    assert calls.exclude(status="ok").count() == 0
    assert server.max_in_flight == 8
