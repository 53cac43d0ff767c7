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
from django.utils import timezone
from ninja import Schema
from pydantic import create_model

from evolution.models import Problem
from evolution.rendering import render_statement
from review import api as review_api
from review import selectors, services
from review.models import GroupItem
from tests.factories import ModelEndpointFactory
from tests.reasoning.judged import judged_reasoning
from tests.support.fake_openai import FakeOpenAI
from tests.support.gate_rules import SELECTION_TIME_OK

from .blinding import (
    FORBIDDEN_KEYS,
    Fetched,
    UnderReview,
    crawl_public_surface,
    crawl_reviewer_surface,
    find_leaks,
    limit_leaks,
    provenance_values,
    public_page_leaks,
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


# --- limits and public pages --------------------------------------------------------------


def test_problems_of_one_group_show_the_same_limits(personas):
    """A seed kept at 2 s / 256 MB next to evolutions at 1 s / 512 MB gives the seed away."""
    lineage, problems = lineage_with_problems(n_evolved=2, tag="limits")
    seed, *evolved = problems
    Problem.objects.filter(pk=seed.pk).update(time_limit_s=2.0, memory_mb=256)
    Problem.objects.filter(pk__in=[p.pk for p in evolved]).update(time_limit_s=1.0, memory_mb=512)
    services.round_create(
        name="limits round",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user],
        lineages=[lineage],
    )
    fetched = crawl_reviewer_surface(personas.reviewer_a.client)
    assert any(f.label.startswith("GET /api/review/groups/") for f in fetched)
    assert limit_leaks(fetched) == []
    # The one presentation is the group's most generous limits, so no problem becomes
    # unsolvable as shown: 2 s and 512 MB.
    group = next(f for f in fetched if f.label.startswith("GET /review/g/") and f.status == 200)
    assert "Time limit: 2 s" in group.body and "Memory limit: 512 MB" in group.body


def test_the_limit_check_catches_differing_limits():
    page = Fetched(
        label="GET /review/g/abc/",
        status=200,
        body="<li>Time limit: 2 s</li><li>Time limit: 1 s</li><li>Memory limit: 256 MB</li>",
        headers="",
        is_json=False,
    )
    assert limit_leaks([page]) != []


def _published_release_under_review(personas):
    """A published release whose problems carry reviewer tags, and an open round in which
    reviewer A has not yet rated them."""
    from releases import services as release_services
    from releases.models import ReleaseItem
    from review.models import Review, Tag
    from tests.releases.builders import crafted_world

    world = crafted_world()
    tag = Tag.objects.create(name="sweep-line-SECRET", status="approved")
    for review in Review.objects.all():
        review.tags.add(tag)
    bench = release_services.benchmark_create(
        default_rules=SELECTION_TIME_OK, name="Public Bench", description="Harder problems."
    )
    release = release_services.release_create(benchmark=bench, campaigns=[world.campaign])
    release_services.gate_run_create(release=release)
    release = release_services.release_freeze(release=release)
    release = release_services.release_publish(release=release)
    review_round = services.round_create(
        name="open round over published problems",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user, personas.reviewer_b.user],
        lineages=list(
            world.campaign.lineages.filter(seed__in=world.seeds.values()).exclude(
                seed=world.seeds["S3"]
            )
        ),
    )
    in_round = set(review_round.groups.values_list("items__problem_id", flat=True))
    under_review = [
        UnderReview(public_id=i.public_id, origin=i.origin, tags=list(i.tags), title=i.title)
        for i in ReleaseItem.objects.filter(release=release, problem_id__in=in_round)
    ]
    return release, review_round, under_review


def test_public_pages_hide_origin_and_reviewer_tags_of_problems_under_blind_review(personas):
    release, _, under_review = _published_release_under_review(personas)
    assert len(under_review) >= 2 and any(u.tags for u in under_review), "fixture changed"
    # Reviewer A, rating these problems blind, gets no public release page at all (the
    # crawl of tests/releases/test_blind_review_public.py checks every page); anyone else
    # gets the pages without origin and tags.
    off_limits = crawl_public_surface(personas.reviewer_a.client)
    assert [(f.status, "off limits" in f.body) for f in off_limits] == [(403, True)]
    fetched = crawl_public_surface(personas.anonymous.client)
    item_pages = [f for f in fetched if "/items/" in f.label and f.status == 200]
    assert len(item_pages) >= len(under_review)
    assert public_page_leaks(fetched, under_review) == []
    detail = next(f for f in fetched if f.label.endswith(f"/v{release.version}/"))
    assert "withheld during blind review" in detail.body


def test_public_pages_show_origin_again_once_every_reviewer_has_submitted(personas):
    release, review_round, under_review = _published_release_under_review(personas)
    from review.models import Assignment

    Assignment.objects.filter(group__round=review_round).update(
        submitted_at=timezone.now(), certified_no_ai=True
    )
    fetched = crawl_public_surface(personas.anonymous.client)
    leaks = public_page_leaks(fetched, under_review)
    # The same check reports every origin badge and tag now shown: it is not blind to them.
    assert any("shows its origin" in leak for leak in leaks)
    assert any("shows reviewer tag 'sweep-line-SECRET'" in leak for leak in leaks)


def test_a_curator_is_warned_when_a_round_includes_published_problems(personas):
    _, review_round, under_review = _published_release_under_review(personas)
    page = personas.curator.client.get(f"/review/rounds/{review_round.pk}/").content.decode()
    assert f"{len(under_review)} problem(s) in this round are published" in page
