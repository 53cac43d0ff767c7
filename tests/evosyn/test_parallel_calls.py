"""EvoSyn's model calls side by side: an instance's solutions, the waiting instances' test-writer
calls and the synthesized problems of empty slots are asked in one step, overlapping on the
loopback server up to the fan-out setting; every kept, pruned and ranked instance equals the
run that asks one call at a time."""

from __future__ import annotations

import pytest

from evolution.models.campaigns import CampaignState
from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline
from evosyn import services
from evosyn.models import Instance
from tests.support.answers import fenced

from .helpers import CRASHING, FIGURE_3, SMALL_SETTINGS, respond, script


@pytest.fixture
def tdb(transactional_db):
    """Threads use connections of their own: the rows must be committed."""


def _run(world, server, name: str) -> int:
    seed_set, endpoint = world
    respond(server, script(strategist=[fenced(CRASHING), fenced(FIGURE_3)]))
    campaign = services.evosyn_campaign_create(
        name=name, seed_set=seed_set, endpoint=endpoint, settings=SMALL_SETTINGS
    )
    campaign_services.campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=60)
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    return campaign.pk


def _outcome(pk: int) -> list:
    return [
        (
            inst.role,
            inst.slot,
            inst.statement,
            inst.status,
            inst.status_reason,
            sorted(inst.solutions.values_list("index", "code", "error")),
            sorted(inst.tests.values_list("index", "input", "output")),
            inst.ranking,
        )
        for inst in Instance.objects.filter(evosyn_id=pk).order_by("role", "slot")
    ]


def test_calls_overlap_with_a_fan_out_and_outcomes_equal_one_call_at_a_time(
    tdb, world, fake_server, settings
):
    fake_server.latency = 0.05
    settings.ENGINE_FANOUT_THREADS = 1
    one_at_a_time = _run(world, fake_server, "one at a time")
    assert fake_server.max_in_flight == 1
    asked = fake_server.request_count

    fake_server.reset_counters()
    settings.ENGINE_FANOUT_THREADS = 4
    side_by_side = _run(world, fake_server, "side by side")
    assert fake_server.request_count == asked
    assert 2 <= fake_server.max_in_flight <= 4  # the fan-out and the endpoint's limit (4)

    expected = _outcome(one_at_a_time)
    assert _outcome(side_by_side) == expected
    assert {"kept", "pruned"} <= {row[3] for row in expected}
