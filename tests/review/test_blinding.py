"""Reviewers never learn where a problem came from.

The crawl (tests/review/blinding.py) visits every page and API response reviewer A can reach
and reports provenance found anywhere. The first test requires an empty report; the others
plant a leak (a provenance value in a selector's output, a provenance field in a copy of a
reviewer schema) and require the same crawl to report it, so the crawl cannot rot into a
test that passes whatever happens.
"""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

import pytest
from django.urls import resolve
from ninja import Schema
from pydantic import create_model

from evolution.rendering import render_statement
from review import api as review_api
from review import selectors, services
from review.models import GroupItem
from tests.factories import ModelEndpointFactory
from tests.reasoning.judged import judged_reasoning
from tests.support.fake_openai import FakeOpenAI

from .blinding import (
    FORBIDDEN_KEYS,
    crawl_reviewer_surface,
    find_leaks,
    provenance_values,
    schema_field_leaks,
)
from .factories import lineage_with_problems

pytestmark = pytest.mark.django_db


@pytest.fixture
def blinded_round(personas):
    ModelEndpointFactory(name="endpoint-SECRET-name", model="model-SECRET-gpt")
    lineages = [lineage_with_problems(n_evolved=n, tag=f"b{n}")[0] for n in (1, 2, 3)]
    review_round = services.round_create(
        name="Round SECRET-round-name",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user, personas.reviewer_b.user],
        lineages=lineages,
        instructions="Rate each problem on its own merits.",
    )
    return review_round


def test_nothing_a_reviewer_can_reach_reveals_provenance(personas, blinded_round):
    fetched = crawl_reviewer_surface(personas.reviewer_a.client)
    labels = [f.label for f in fetched]
    # The crawl reached the queue, all three group pages, the API and the error pages.
    assert sum(1 for label in labels if label.startswith("GET /review/g/")) >= 4
    assert sum(1 for label in labels if label.startswith("GET /api/review/groups/")) == 4
    assert {f.status for f in fetched} >= {200, 400, 403, 404}
    assert find_leaks(fetched, provenance_values(blinded_round)) == []


def test_reviewer_schemas_declare_no_provenance_field():
    assert schema_field_leaks(review_api.REVIEWER_SCHEMAS) == []
    assert not (selectors.REVIEWER_FIELDS & FORBIDDEN_KEYS)


def test_the_crawl_catches_a_provenance_value_leaked_by_a_selector(
    personas, blinded_round, monkeypatch
):
    real = selectors.reviewer_group

    def leaky_group(*, reviewer, opaque_id):
        group = real(reviewer=reviewer, opaque_id=opaque_id)
        problems = []
        for p in group.problems:
            title = GroupItem.objects.get(opaque_id=p.opaque_id).problem.title
            problems.append(dataclasses.replace(p, label=title))
        return dataclasses.replace(group, problems=problems)

    monkeypatch.setattr(selectors, "reviewer_group", leaky_group)
    leaks = find_leaks(
        crawl_reviewer_surface(personas.reviewer_a.client), provenance_values(blinded_round)
    )
    assert any("GET /review/g/" in leak and "title SECRET" in leak for leak in leaks)
    assert any("GET /api/review/groups/" in leak and "title SECRET" in leak for leak in leaks)


def test_the_crawl_catches_a_provenance_field_added_to_a_reviewer_schema(
    personas, blinded_round, monkeypatch
):
    # A copy of the reviewer schemas with one extra field, as a careless change would add it.
    LeakyProblemOut = create_model(
        "LeakyProblemOut", __base__=review_api.ReviewerProblemOut, kind=(str, ...)
    )
    LeakyGroupOut = create_model(
        "LeakyGroupOut", __base__=review_api.ReviewerGroupOut, problems=(list[LeakyProblemOut], ...)
    )
    assert issubclass(LeakyGroupOut, Schema)
    assert schema_field_leaks([LeakyProblemOut]) == ["LeakyProblemOut.kind"]

    real = selectors.reviewer_group

    def group_with_kind(*, reviewer, opaque_id):
        group = dataclasses.asdict(real(reviewer=reviewer, opaque_id=opaque_id))
        for p in group["problems"]:
            p["kind"] = GroupItem.objects.get(opaque_id=p["opaque_id"]).problem.kind
        return group

    # Only the API reads the leaky selector; the HTML pages keep the real one.
    api_selectors = SimpleNamespace(**{**vars(selectors), "reviewer_group": group_with_kind})
    monkeypatch.setattr(review_api, "selectors", api_selectors)
    group_url = f"/api/review/groups/{selectors.reviewer_queue(reviewer=personas.reviewer_a.user)[0].opaque_id}"
    path_view = resolve(group_url).func.__closure__[0].cell_contents
    [operation] = [op for op in path_view.operations if "GET" in op.methods]
    monkeypatch.setattr(
        operation, "response_models", {200: operation._create_response_model(LeakyGroupOut)}
    )

    leaks = find_leaks(
        crawl_reviewer_surface(personas.reviewer_a.client), provenance_values(blinded_round)
    )
    assert any("JSON key .problems[0].kind" in leak for leak in leaks)
    assert any("word 'seed'" in leak or "word 'evolved'" in leak for leak in leaks)


def test_a_statement_heading_that_repeats_the_title_is_dropped():
    html = render_statement("# Secret Title\n\nCompute $a_i$.", title="secret title")
    assert "Secret Title" not in html
    assert '<span class="math">$a_i$</span>' in html


def test_statements_never_pass_raw_html():
    html = render_statement('<img src=x onerror="alert(1)">\n\n```\n<b>x</b>\n```')
    assert "<img" not in html and "<b>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html


# --- reasoning groups ---------------------------------------------------------------------


@pytest.fixture
def fake_server():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def mixed_round(personas, fake_server):
    """A coding lineage and two reasoning groups in one round, reviewed by A and B."""
    ModelEndpointFactory(name="endpoint-SECRET-name", model="model-SECRET-gpt")
    rc = judged_reasoning(
        fake_server, verdicts=[True, False, None, True], types=("deduction_secret_type",)
    )
    lineage, _ = lineage_with_problems(n_evolved=1, tag="mix")
    return services.round_create(
        name="Round SECRET-mixed-name",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user, personas.reviewer_b.user],
        lineages=[lineage],
        reasoning_groups=selectors.reasoning_group_plan(reasoning=rc, group_size=2),
    )


def test_nothing_a_reviewer_can_reach_in_a_reasoning_group_reveals_provenance(
    personas, mixed_round
):
    fetched = crawl_reviewer_surface(personas.reviewer_a.client)
    question_pages = [
        f for f in fetched if f.label.startswith("GET /review/g/") and "Given answer" in f.body
    ]
    assert len(question_pages) >= 2, "the crawl did not reach the reasoning groups"
    api_groups = [
        json.loads(f.body)
        for f in fetched
        if f.label.startswith("GET /api/review/groups/") and f.status == 200
    ]
    assert sum(len(g["questions"]) for g in api_groups) == 4
    values = provenance_values(mixed_round)
    # The crawl knows the reasoning provenance: campaign, type and the judges' rationales.
    assert {"deduction_secret_type", "rationale-SECRET-1"} <= values
    assert find_leaks(fetched, values) == []


def test_the_crawl_catches_judge_rationale_leaked_into_a_reasoning_group(
    personas, mixed_round, monkeypatch
):
    real = selectors.reviewer_group

    def leaky_group(*, reviewer, opaque_id):
        group = real(reviewer=reviewer, opaque_id=opaque_id)
        questions = []
        for q in group.questions:
            item = GroupItem.objects.get(opaque_id=q.opaque_id).reasoning_item
            questions.append(dataclasses.replace(q, label=item.rationale or item.reasoning_type))
        return dataclasses.replace(group, questions=questions)

    monkeypatch.setattr(selectors, "reviewer_group", leaky_group)
    leaks = find_leaks(
        crawl_reviewer_surface(personas.reviewer_a.client), provenance_values(mixed_round)
    )
    assert any("GET /review/g/" in leak and "SECRET" in leak for leak in leaks)
    assert any("GET /api/review/groups/" in leak and "SECRET" in leak for leak in leaks)
