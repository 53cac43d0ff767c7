"""Problems kept by EvoSyn enter review rounds, the curation gate and releases like evolved
problems: the method is shown to curators and hidden from reviewers."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline
from evosyn import services
from evosyn.models import InstanceStatus
from releases import services as release_services
from review import services as review_services
from tests.review.blinding import crawl_reviewer_surface, find_leaks, provenance_values
from tests.support.answers import fenced
from tests.support.gate_rules import SELECTION_TIME_OK

from .helpers import CRASHING, FIGURE_3, SMALL_SETTINGS, respond, script

pytestmark = pytest.mark.django_db


def campaign_name(problem) -> str:
    from evolution.models import Campaign

    return Campaign.objects.get(pk=problem.metadata["campaign"]).name


@pytest.fixture
def kept(world, fake_server, personas):
    seed_set, endpoint = world
    respond(fake_server, script(strategist=[fenced(CRASHING), fenced(FIGURE_3)]))
    campaign = services.evosyn_campaign_create(
        name="evosyn campaign SECRET-name",
        seed_set=seed_set,
        endpoint=endpoint,
        settings=SMALL_SETTINGS,
        created_by=personas.admin.user,
    )
    campaign_services.campaign_launch(campaign_id=campaign.pk)
    run_inline(campaign_id=campaign.pk, max_steps=60)
    inst = campaign.evosyn.instances.get(status=InstanceStatus.KEPT)
    return campaign, inst.kept_problem


def test_a_kept_problem_enters_a_review_round_with_its_method_hidden_from_reviewers(personas, kept):
    _, problem = kept
    review_round = review_services.round_create(
        name="EvoSyn round",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user, personas.reviewer_b.user],
        roots=[problem.parent],
    )
    group = review_round.groups.get()
    assert problem.pk in set(group.items.values_list("problem_id", flat=True))

    page = personas.curator.client.get(reverse("review:round_detail", args=[review_round.pk]))
    assert page.status_code == 200
    assert "synthesized (evosyn)" in page.content.decode()

    fetched = crawl_reviewer_surface(personas.reviewer_a.client)
    values = provenance_values(review_round)
    assert "evosyn" in values  # the crawl looks for the method itself
    assert problem.title in values
    values.add(campaign_name(problem))  # no lineage points at an EvoSyn campaign: add it
    # HumanEval titles are the entry point, which the statement must name: not provenance.
    values.discard(problem.parent.title)
    assert find_leaks(fetched, values) == []


def test_the_gate_takes_kept_problems_of_a_released_evosyn_campaign(personas, kept):
    campaign, problem = kept
    benchmark = release_services.benchmark_create(
        default_rules=SELECTION_TIME_OK, name="EvoSyn bench"
    )
    release = release_services.release_create(benchmark=benchmark, campaigns=[campaign])
    run = release_services.gate_run_create(release=release, by=personas.curator.user)
    entries = {e["public_id"]: e for e in run.report}
    assert problem.public_id in entries
    assert entries[problem.public_id]["origin"] == "evolved"
    # Unreviewed, it fails the review rules: it is gated, not waved through.
    assert not entries[problem.public_id]["passed"]
