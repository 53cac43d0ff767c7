"""Section 3.2's synthesis as the campaign page shows it: a synthesized problem that repeats a
seed is dropped after deduplication ("After deduplication, the synthesized problems form a new
set D"), and a kept problem shows how many unit tests its selected testing holds (the count the
document's Figure 9 plots per problem)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from evolution.models import Problem
from evolution.models.campaigns import CampaignState
from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline
from evosyn import services
from evosyn.models import InstanceRole, InstanceStatus

from .helpers import SEED, SMALL_SETTINGS, SUM_EVENS_STATEMENT, respond, script

pytestmark = pytest.mark.django_db


def test_a_repeated_seed_is_deduplicated_and_a_kept_problem_shows_its_unit_tests(
    personas, world, fake_server
):
    seed_set, endpoint = world
    table = script(strategist=[])
    seed_statement = Problem.objects.get(origin_id=SEED).statement
    # Slot 0 rewrites the seed itself; slot 1 is the sum-of-evens problem (slot 0's answers).
    table[("synthesizer", "evosyn;synth=0;role=synthesizer")] = json.dumps(
        {
            "title": "Close elements",
            "entry_point": "has_close_elements",
            "statement": seed_statement,
        }
    )
    for (role, key), answer in list(table.items()):
        if key.startswith("evosyn;synth=0;") and role != "synthesizer":
            table[(role, key.replace("synth=0;", "synth=1;"))] = answer
    table[("synthesizer", "evosyn;synth=1;role=synthesizer")] = json.dumps(
        {"title": "Sum of evens", "entry_point": "sum_evens", "statement": SUM_EVENS_STATEMENT}
    )
    respond(fake_server, table)
    campaign = services.evosyn_campaign_create(
        name="evosyn synthesis",
        seed_set=seed_set,
        endpoint=endpoint,
        settings={**SMALL_SETTINGS, "max_iterations": 0, "synth_problems": 2},
    )
    campaign_services.campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=60)
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    duplicate, kept = campaign.evosyn.instances.filter(role=InstanceRole.SYNTHETIC).order_by("slot")
    assert duplicate.status == InstanceStatus.PRUNED
    assert duplicate.status_reason.startswith(f"near-duplicate of seed {SEED}")
    assert not duplicate.solutions.exists()  # dropped before any solution or testing
    # The initial strategy ranks first the testing every solution passes ([] and [0]: two
    # unit tests) and keeps the problem with it.
    assert kept.status == InstanceStatus.KEPT, kept.status_reason
    assert kept.kept_problem.tests.count() == kept.kept_problem.metadata["unit_tests"] == 2
    page = personas.curator.client.get(reverse("evosyn:campaign_detail", args=[campaign.pk]))
    body = page.content.decode()
    assert '<span class="unit-tests">2 unit tests</span>' in body
    assert f"near-duplicate of seed {SEED}" in body
