"""Problems from X-Coder campaigns travel like evolved ones: into blinded review groups (the
reviewer crawl finds no provenance, the method included), into the curation gate through the
campaign's problem set, and into a frozen release. Curators see the method."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from evolution.models import Campaign, Problem
from evolution.models.campaigns import CampaignState
from evolution.streams.runner import run_inline
from releases import exports
from releases import services as release_services
from review import services as review_services
from tests.review.blinding import crawl_reviewer_surface, find_leaks, provenance_values
from tests.support.gate_rules import SELECTION_TIME_OK
from xcoder import services
from xcoder.models import CandidateSolution

from .helpers import SCRIPTED_SETTINGS, Responder, base_table, endpoint, seed_set

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def accepted(fake_server) -> Problem:
    fake_server.responder = Responder(base_table())
    campaign = services.xcoder_campaign_create(
        name="campaign-SECRET-xcoder",
        seed_set=seed_set(),
        generator_endpoint=endpoint(fake_server, "generator"),
        solver_endpoints=[endpoint(fake_server, "solver-a"), endpoint(fake_server, "solver-b")],
        settings={"num_tasks": 1, "style_mix": {"codeforces": 100}, **SCRIPTED_SETTINGS},
    )
    Campaign.objects.filter(pk=campaign.pk).update(state=CampaignState.QUEUED)
    run_inline(campaign_id=campaign.pk, max_steps=60)
    return Problem.objects.get(method="xcoder")


def test_a_review_group_of_a_synthesized_problem_hides_the_method(personas, accepted):
    review_round = review_services.round_create(
        name="Round SECRET-xcoder",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user, personas.reviewer_b.user],
        roots=[accepted.lineage_root],
    )
    group = review_round.groups.get()
    assert set(group.items.values_list("problem_id", flat=True)) == {
        accepted.pk,
        accepted.lineage_root_id,
    }
    values = provenance_values(review_round)
    assert "xcoder" in values  # the crawl looks for the method itself
    fetched = crawl_reviewer_surface(personas.reviewer_a.client)
    assert any(f.label.startswith("GET /review/g/") for f in fetched)
    assert find_leaks(fetched, values) == []
    # The curator's round page names the method of synthesized problems.
    page = personas.curator.client.get(reverse("review:round_detail", args=[review_round.pk]))
    assert "(xcoder)" in page.content.decode()


def test_the_gate_takes_synthesized_problems_from_the_campaign_problem_set(personas, accepted):
    xc_set = Campaign.objects.get(kind="xcoder").xcoder.problem_set
    benchmark = release_services.benchmark_create(default_rules=SELECTION_TIME_OK, name="Synthetic")
    release = release_services.release_create(
        benchmark=benchmark, problem_sets=[xc_set], rules={"min_reviews": 0, "min_quality": 1.0}
    )
    run = release_services.gate_run_create(release=release, by=personas.curator.user)
    [entry] = [e for e in run.report if e["problem_id"] == accepted.pk]
    # X-Coder measures no panel pass rate: the gate says so, and a curator may include the
    # problem against the gate with a justification.
    assert not entry["passed"]
    assert any(r["rule"] == "difficulty" and "no panel" in r["detail"] for r in entry["rules"])
    release_services.curation_decide(
        release=release,
        problem=accepted,
        include=True,
        justification="verified by a 3-way vote with a hold-out; no panel run yet",
        by=personas.curator.user,
    )
    frozen = release_services.release_freeze(release=release, by=personas.curator.user)
    assert list(frozen.items.values_list("problem_id", flat=True)) == [accepted.pk]


def test_curators_see_the_method_on_the_problem_page(personas, accepted):
    page = personas.curator.client.get(
        reverse("evolution:problem_detail", args=[accepted.public_id])
    )
    assert "synthesized / xcoder" in page.content.decode()


def test_the_sft_export_pairs_the_statement_with_the_golden_chain_of_thought(personas, accepted):
    """[q, A_golden] with the golden candidate's long chain of thought: the SFT export's answer
    is the think block of the golden candidate's real answer, then the golden code."""
    golden = CandidateSolution.objects.get(pk=accepted.metadata["golden_candidate"])
    thought = re.search(r"<think>\n(.*)\n</think>", golden.content, re.DOTALL).group(1)
    assert thought == "The k largest offers give the best total."  # the scripted model's
    assert accepted.metadata["golden_reasoning"] == thought
    assert accepted.metadata["golden_call"] == golden.call_id

    xc_set = Campaign.objects.get(kind="xcoder").xcoder.problem_set
    benchmark = release_services.benchmark_create(default_rules=SELECTION_TIME_OK, name="SFT")
    release = release_services.release_create(
        benchmark=benchmark, problem_sets=[xc_set], rules={"min_reviews": 0, "min_quality": 1.0}
    )
    release_services.gate_run_create(release=release, by=personas.curator.user)
    release_services.curation_decide(
        release=release,
        problem=accepted,
        include=True,
        justification="verified by the vote; exported for SFT",
        by=personas.curator.user,
    )
    frozen = release_services.release_freeze(release=release, by=personas.curator.user)
    lines = exports.export_bytes(frozen, "sft").decode().splitlines()
    [line] = [json.loads(x) for x in lines]
    assert line["id"] == frozen.items.get().public_id
    assert line["reasoning"] == thought
    user, assistant = line["messages"][-2:]
    assert user["role"] == "user" and "Lantern Festival" in user["content"]
    assert assistant["role"] == "assistant"
    assert assistant["content"] == (
        f"<think>\n{thought}\n</think>\n\n```python\n{accepted.reference_solution.rstrip()}\n```"
    )
    # The golden code is the code the C.1 gate took from that answer.
    assert golden.code == accepted.reference_solution
