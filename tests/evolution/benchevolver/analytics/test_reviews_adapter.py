"""Review aggregates per problem, as the review-based charts read them."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from review.analytics import problem_review_aggregates
from review.models import (
    Assignment,
    GroupItem,
    Review,
    ReviewGroup,
    ReviewRound,
    ScoreOverride,
    Tag,
)
from tests.factories import UserFactory

from .data import build_campaign

pytestmark = pytest.mark.django_db


def _tag(name: str, **kw) -> Tag:
    return Tag.objects.get_or_create(name=name, defaults=kw)[0]


def _review(group, item, reviewer, *, tags=(), submitted=True, **ratings) -> Review:
    assignment, _ = Assignment.objects.get_or_create(
        group=group,
        reviewer=reviewer,
        defaults={"certified_no_ai": True, "submitted_at": timezone.now() if submitted else None},
    )
    review = Review.objects.create(
        assignment=assignment,
        item=item,
        position=assignment.reviews.count(),
        submitted_at=timezone.now() if submitted else None,
        **ratings,
    )
    review.tags.set(tags)
    return review


def _reviewed_lineage(built, index: int, seed_tags, evolved_tags, reviewers, **ratings):
    """Review the lineage's seed and its first accepted problem by every reviewer given."""
    lineage = built.lineages[index]
    accepted = next(
        c for c in built.candidates if c.lineage_id == lineage.pk and c.decision == "accepted"
    )
    rnd = ReviewRound.objects.get_or_create(name="round")[0]
    group = ReviewGroup.objects.create(round=rnd, lineage=lineage, root_problem=lineage.seed)
    seed_item = GroupItem.objects.create(group=group, problem=lineage.seed, lineage_position=0)
    evolved_item = GroupItem.objects.create(
        group=group, problem=accepted.accepted_problem, lineage_position=1
    )
    for reviewer, (seed_rating, evolved_rating) in zip(
        reviewers, ratings["difficulty"], strict=True
    ):
        _review(
            group,
            seed_item,
            reviewer,
            tags=seed_tags,
            difficulty=seed_rating,
            clarity=4,
            validity="valid",
            cf_rating=1100,
        )
        _review(
            group,
            evolved_item,
            reviewer,
            tags=evolved_tags,
            difficulty=evolved_rating,
            clarity=5,
            validity="valid",
            cf_rating=2100,
        )
    return lineage, accepted.accepted_problem, seed_item, evolved_item


@pytest.fixture
def built(db):
    built = build_campaign(seeds=12, rounds=6, rng_seed=5)
    accepted_lineages = {c.lineage_id for c in built.candidates if c.decision == "accepted"}
    assert len(accepted_lineages) >= 2, "the fixture needs two lineages with accepted problems"
    built.accepted_indexes = [
        i for i, lin in enumerate(built.lineages) if lin.pk in accepted_lineages
    ]
    return built


def test_nothing_reviewed_gives_no_aggregates(built):
    assert problem_review_aggregates([lin.seed_id for lin in built.lineages]) == {}


def test_ratings_are_averaged_tags_united_and_merged_tags_followed(built):
    ann, bob = UserFactory(username="ann"), UserFactory(username="bob")
    search, dp = _tag("search"), _tag("dynamic programming")
    hld = _tag("heavy-light decomposition")
    old = _tag("hld (old)", status="merged", merged_into=hld)
    lineage, evolved, _, evolved_item = _reviewed_lineage(
        built,
        built.accepted_indexes[0],
        [search],
        [dp, old],
        [ann, bob],
        difficulty=[(1, 3), (2, 4)],
    )
    # A draft never counts.
    _review(
        evolved_item.group, evolved_item, UserFactory(username="cy"), submitted=False, difficulty=1
    )
    aggregates = problem_review_aggregates([lineage.seed_id, evolved.pk])
    assert aggregates[lineage.seed_id]["difficulty"] == 1.5
    assert aggregates[evolved.pk]["difficulty"] == 3.5
    assert aggregates[evolved.pk]["n_reviews"] == 2
    assert aggregates[evolved.pk]["tags"] == ["dynamic programming", "heavy-light decomposition"]
    assert aggregates[evolved.pk]["validity"] == "valid"


def test_the_newest_curator_override_wins(built):
    ann = UserFactory(username="ann")
    lineage, evolved, _, evolved_item = _reviewed_lineage(
        built,
        built.accepted_indexes[0],
        [_tag("search")],
        [_tag("greedy")],
        [ann],
        difficulty=[(1, 3)],
    )
    ScoreOverride.objects.create(item=evolved_item, dimension="difficulty", value="4", reason="a")
    ScoreOverride.objects.create(item=evolved_item, dimension="difficulty", value="5", reason="b")
    ScoreOverride.objects.create(
        item=evolved_item, dimension="validity", value="invalid", reason="c"
    )
    aggregate = problem_review_aggregates([evolved.pk])[evolved.pk]
    assert aggregate["difficulty"] == 5.0
    assert aggregate["validity"] == "invalid"


def test_review_charts_and_validity_column_fill_in_from_reviews(personas, built):
    ann = UserFactory(username="ann")
    search, seg = _tag("search"), _tag("segment tree")
    first, second = built.accepted_indexes[:2]
    _reviewed_lineage(built, first, [search], [search, seg], [ann], difficulty=[(1, 4)])
    _reviewed_lineage(built, second, [search], [seg], [ann], difficulty=[(2, 3)])
    client = personas.curator.client
    pk = built.campaign.pk

    def chart(name):
        return client.get(reverse("evolution:campaign_chart_json", args=[pk, name])).json()

    categories = chart("categories")
    assert (categories["seeds_reviewed"], categories["evolved_reviewed"]) == (2, 2)
    assert categories["rows"][0]["tag"] in {"search", "segment tree"}
    new = chart("new_categories")
    assert new["lineages"] == 2 and new["mean_new"] == 1.0 and new["share_with_new"] == 1.0
    ratings = chart("ratings")["dimensions"]
    assert ratings["difficulty"]["seed_summary"]["mean"] == 1.5
    assert ratings["difficulty"]["evolved_summary"]["mean"] == 3.5
    everything = next(r for r in chart("yield")["rows"] if r["difficulty"] == "all")
    assert (everything["reviewed"], everything["validity"]) == (2, 1.0)


def test_review_activity_refreshes_cached_review_charts(personas, built):
    client = personas.curator.client
    url = reverse("evolution:campaign_chart_json", args=[built.campaign.pk, "categories"])
    assert client.get(url).json()["rows"] == []
    _reviewed_lineage(
        built,
        built.accepted_indexes[0],
        [_tag("search")],
        [_tag("greedy")],
        [UserFactory(username="ann")],
        difficulty=[(1, 3)],
    )
    assert {r["tag"] for r in client.get(url).json()["rows"]} == {"search", "greedy"}


def test_only_the_site_that_composes_review_serves_review_data(personas, built, settings):
    """The review app's aggregates reach the charts because the project's URLconf passes them
    to the evolution URLs; the evolution URLconf on its own serves the same charts with
    nothing reviewed, whatever the review tables hold."""
    _reviewed_lineage(
        built,
        built.accepted_indexes[0],
        [_tag("search")],
        [_tag("greedy")],
        [UserFactory(username="ann")],
        difficulty=[(1, 3)],
    )
    client = personas.curator.client
    pk = built.campaign.pk

    def chart(name):
        response = client.get(reverse("evolution:campaign_chart_json", args=[pk, name]))
        assert response.status_code == 200, name
        return response.json()

    def reviewed_totals(yield_table):
        return next(r for r in yield_table["rows"] if r["difficulty"] == "all")["reviewed"]

    assert settings.ROOT_URLCONF == "benchapp.urls"
    categories = chart("categories")
    assert (categories["seeds_reviewed"], categories["evolved_reviewed"]) == (1, 1)
    assert {r["tag"] for r in categories["rows"]} == {"search", "greedy"}
    assert reviewed_totals(chart("yield")) == 1

    settings.ROOT_URLCONF = "tests.evolution.benchevolver.analytics.evolution_only_urls"
    categories = chart("categories")
    assert (categories["seeds_reviewed"], categories["evolved_reviewed"]) == (0, 0)
    assert categories["rows"] == []
    assert reviewed_totals(chart("yield")) == 0


def test_review_activity_changes_only_the_review_charts_etags(personas, built):
    """The review-based charts' fingerprint follows review activity; the other charts keep
    their cached data and ETag when a review is saved."""
    client = personas.curator.client
    pk = built.campaign.pk

    def etags():
        return {
            name: client.get(reverse("evolution:campaign_chart_json", args=[pk, name]))["ETag"]
            for name in ("categories", "yield", "cost", "funnel")
        }

    before = etags()
    _reviewed_lineage(
        built,
        built.accepted_indexes[0],
        [_tag("search")],
        [_tag("greedy")],
        [UserFactory(username="ann")],
        difficulty=[(1, 3)],
    )
    after = etags()
    assert after["categories"] != before["categories"]
    assert after["yield"] != before["yield"]
    assert (after["cost"], after["funnel"]) == (before["cost"], before["funnel"])
