"""Review rounds built from the web out of any kind's problems: campaigns of every coding kind
and problem sets, filtered by measured level and pass@1, tag and review status, grouped by the
seed they share; the blinding rules are those of lineage groups."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evolution.models import Campaign, Problem, ProblemSet, TestCase
from review import selectors, services
from review.models import GroupItem, Review, ReviewGroup, ReviewRound
from tests.factories import (
    CampaignFactory,
    EvolvedProblemFactory,
    MeasurementFactory,
    ProblemFactory,
)
from tests.review.blinding import crawl_reviewer_surface, find_leaks, provenance_values

from .conftest import answers
from .factories import lineage_with_problems

pytestmark = pytest.mark.django_db


def synthesized(campaign: Campaign, seed: Problem, method: str, title: str, n: int) -> Problem:
    problem = EvolvedProblemFactory(
        parent=seed,
        kind="synthesized",
        method=method,
        title=title,
        statement=f"Read an integer n and print n + {n}.",
        metadata={"campaign": campaign.pk},
    )
    TestCase.objects.create(
        problem=problem, tier="public", ordinal=0, hidden=False, input_text="1\n", output_text="2\n"
    )
    return problem


def measured(problem: Problem, passes: int, attempts: int, level: int) -> None:
    MeasurementFactory(problem=problem, passes=passes, attempts=attempts, level=level)


@pytest.fixture
def kinds(personas):
    """A BenchEvolver lineage and one campaign of each other coding kind, each with problems."""
    lineage, bench = lineage_with_problems(n_evolved=2, tag="bench")
    seed = ProblemFactory(title="Shared seed SECRET", origin_dataset="dataset-SECRET-seed")
    made = {}
    for k, kind in enumerate(("xcoder", "evosyn", "frontiersmith")):
        campaign = CampaignFactory(
            name=f"campaign-SECRET-{kind}", kind=kind, created_by=personas.admin.user
        )
        made[kind] = [
            synthesized(campaign, seed, kind, f"{kind} SECRET problem {i}", 10 * k + i)
            for i in range(2)
        ]
    return lineage, bench, seed, made


def test_the_form_lists_campaigns_of_every_kind_and_problem_sets(personas, kinds):
    ProblemSet.objects.create(name="humaneval-like set")
    page = personas.curator.client.get(reverse("review:round_create")).content.decode()
    for kind in ("xcoder", "evosyn", "frontiersmith", "bench"):
        assert f"campaign-SECRET-{kind}" in page
    assert "campaign-SECRET-xcoder · X-Coder feature-tree synthesis" in page
    assert "campaign-SECRET-evosyn · EvoSyn" in page
    assert "campaign-SECRET-frontiersmith · FrontierSmith" in page
    assert "humaneval-like set" in page


def test_a_round_from_the_web_mixes_every_kind_and_stays_blind(personas, kinds):
    lineage, bench, seed, made = kinds
    campaigns = [lineage.campaign, *Campaign.objects.filter(kind__in=list(made))]
    client = personas.curator.client
    data = {
        "name": "Mixed round",
        "campaigns": [c.pk for c in campaigns],
        "reviewers": [personas.reviewer_a.user.pk, personas.reviewer_b.user.pk],
        "reviewers_per_group": 2,
        "include_seeds": "on",
        "exclude_creators": "on",
        "review_status": "any",
    }
    preview = client.post(reverse("review:round_create"), {**data, "preview": "1"})
    assert preview.status_code == 200
    assert not ReviewRound.objects.exists()  # a preview creates nothing
    body = preview.content.decode()
    for method in (bench[1].method, "xcoder", "evosyn", "frontiersmith"):
        assert f'data-method="{method}"' in body

    response = client.post(reverse("review:round_create"), data)
    review_round = ReviewRound.objects.get()
    assert response["Location"] == reverse("review:round_detail", args=[review_round.pk])
    items = GroupItem.objects.filter(group__round=review_round)
    methods = set(items.values_list("problem__method", flat=True))
    assert {bench[1].method, "xcoder", "evosyn", "frontiersmith"} <= methods
    # Every problem once; problems sharing a seed are grouped with it; groups hold 2-4.
    problem_ids = list(items.values_list("problem_id", flat=True))
    assert len(problem_ids) == len(set(problem_ids)) == 3 + 1 + 6
    for group in review_round.groups.all():
        assert 2 <= group.items.count() <= 4
    first = ReviewGroup.objects.get(round=review_round, root_problem=seed)
    assert first.items.get(lineage_position=0).problem == seed
    # The admin launched the synthesis campaigns: never assigned their groups.
    assert not review_round.groups.filter(assignments__reviewer=personas.admin.user).exists()

    values = provenance_values(review_round)
    values |= {c.name for c in campaigns} | {"xcoder", "evosyn", "frontiersmith"}
    fetched = crawl_reviewer_surface(personas.reviewer_a.client)
    assert any(f.label.startswith("GET /review/g/") for f in fetched)
    assert find_leaks(fetched, values) == []


def test_filters_take_level_pass_rate_tag_and_review_status(personas, kinds):
    lineage, bench, seed, made = kinds
    x0, x1 = made["xcoder"]
    e0, e1 = made["evosyn"]
    measured(x0, 1, 8, 4)
    measured(x1, 7, 8, 1)
    measured(e0, 3, 8, 3)
    campaigns = Campaign.objects.filter(kind__in=["xcoder", "evosyn"])

    def chosen(**filters):
        return {
            p.pk
            for p in selectors.coding_problem_choice(
                campaigns=campaigns, filters=selectors.ProblemFilter(**filters)
            )
        }

    assert chosen() == {x0.pk, x1.pk, e0.pk, e1.pk}
    # Unmeasured problems (e1) fail any measurement filter.
    assert chosen(levels=(3, 4)) == {x0.pk, e0.pk}
    assert chosen(min_pass_at_1=0.05, max_pass_at_1=0.5) == {x0.pk, e0.pk}
    assert chosen(max_pass_at_1=0.2) == {x0.pk}

    # A reviewer's tag (or its synonym) and the review status.
    review_round = services.round_create(
        name="earlier",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user],
        problem_groups=[[x0, e0]],
        reviewers_per_group=1,
    )
    assignment = review_round.groups.get().assignments.get()
    assert chosen(review_status="unreviewed") == {x1.pk, e1.pk}
    assert chosen(review_status="pending") == {x0.pk, e0.pk}
    data = {"certify_no_ai": "on"}
    for review in Review.objects.filter(assignment=assignment).select_related("item"):
        data.update(answers(review.item.opaque_id, tags="segment tree"))
    assert services.assignment_submit(assignment=assignment, data=data).ok
    assert chosen(review_status="reviewed") == {x0.pk, e0.pk}
    assert chosen(tag="Segment Tree") == {x0.pk, e0.pk}
    assert chosen(tag="dijkstra") == set()


def test_problem_sets_are_sources_and_a_lone_problem_is_reported(personas):
    a, b, c = (ProblemFactory(title=f"Set problem {i}") for i in range(3))
    problem_set = ProblemSet.objects.create(name="three seeds")
    problem_set.problems.set([a, b, c])
    groups, left_out = selectors.coding_group_plan(
        problems=selectors.coding_problem_choice(problem_sets=[problem_set])
    )
    # Three unrelated seeds: one group of three.
    assert [[p.pk for p in g] for g in groups] == [[a.pk, b.pk, c.pk]]
    assert left_out == []
    groups, left_out = selectors.coding_group_plan(problems=[a])
    assert groups == [] and left_out == [a]

    response = personas.curator.client.post(
        reverse("review:round_create"),
        {
            "name": "Lonely",
            "problem_sets": [ProblemSet.objects.create(name="one").pk],
            "reviewers": [personas.reviewer_a.user.pk],
            "reviewers_per_group": 1,
        },
    )
    assert response.status_code == 200
    assert "No review group can be formed" in response.content.decode()


def test_five_problems_of_one_seed_make_two_groups():
    seed = ProblemFactory()
    children = [EvolvedProblemFactory(parent=seed) for _ in range(4)]
    groups, left_out = selectors.coding_group_plan(problems=children)
    assert [len(g) for g in groups] == [3, 2]
    assert groups[0][0] == seed and left_out == []
