"""FrontierSmith's model calls side by side: the round's waiting items of a stage (probes, seed
formulations, mutations, filter verdicts, sampled solutions, pair judgements) are asked in one
step, overlapping on the loopback server up to the fan-out setting, and every decision equals
the run that asks one call at a time."""

from __future__ import annotations

import pytest

from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_launch
from evolution.streams.runner import run_inline
from frontiersmith.models import FilterProbe, FrontierCandidate
from tests.frontiersmith.helpers import make_campaign


@pytest.fixture
def tdb(transactional_db):
    """Threads use connections of their own: the rows must be committed."""


def _run(world) -> int:
    campaign = make_campaign(world)
    campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk)
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    return campaign.pk


def _outcome(pk: int) -> dict:
    return {
        "probes": sorted(
            FilterProbe.objects.filter(frontier_id=pk).values_list(
                "label", "problem__title", "accepted"
            )
        ),
        "candidates": [
            (
                c.round,
                c.index,
                c.operator,
                c.statement,
                c.decision,
                c.decision_reason,
                c.solutions,
                c.pair_verdicts,
                c.judged_divergence,
                c.filter_passed,
            )
            for c in FrontierCandidate.objects.filter(frontier_id=pk).order_by("round", "index")
        ],
    }


def test_calls_overlap_with_a_fan_out_and_decisions_equal_one_call_at_a_time(
    tdb, world, script, settings
):
    server = world["server"]
    server.latency = 0.05
    settings.ENGINE_FANOUT_THREADS = 1
    one_at_a_time = _run(world)
    assert server.max_in_flight == 1
    asked = server.request_count

    server.reset_counters()
    settings.ENGINE_FANOUT_THREADS = 4
    side_by_side = _run(world)
    assert server.request_count == asked
    assert 2 <= server.max_in_flight <= 4  # the fan-out and the endpoints' limit (4)

    expected = _outcome(one_at_a_time)
    assert _outcome(side_by_side) == expected
    decided = {c[4] for c in expected["candidates"]}
    assert {"accepted", "filtered_out"} <= decided
