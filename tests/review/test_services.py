import random
from collections import Counter

import pytest
from django.core.exceptions import ValidationError

from review import selectors, services
from review.models import Adjudication, Assignment, GroupItem, Review, Tag, TagStatus
from tests.factories import CampaignFactory, ProblemFactory

from .conftest import answers
from .factories import lineage_with_problems

pytestmark = pytest.mark.django_db


def _group_data(assignment, certify=True, **overrides):
    data = {}
    for review in assignment.reviews.select_related("item"):
        data.update(answers(review.item.opaque_id, **overrides))
    if certify:
        data["certify_no_ai"] = "on"
    return data


def test_it_builds_one_group_per_lineage_with_the_seed_and_accepted_problems(review_round):
    group = review_round.groups.get()
    items = list(group.items.order_by("lineage_position"))
    assert [i.problem for i in items] == review_round.problems
    assert group.root_problem == review_round.problems[0]
    for item in items:
        assert item.opaque_id != item.problem.public_id
        assert len(item.opaque_id) == 12 and int(item.opaque_id, 16) >= 0


def test_it_caps_a_group_at_four_problems(personas):
    lineage, problems = lineage_with_problems(n_evolved=5)
    rnd = services.round_create(
        name="r",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user],
        lineages=[lineage],
    )
    assert list(GroupItem.objects.filter(group__round=rnd).values_list("problem", flat=True)) == [
        p.pk for p in problems[:4]
    ]


def test_it_rejects_a_lineage_without_an_accepted_problem(personas):
    lineage, _ = lineage_with_problems(n_evolved=0)
    with pytest.raises(ValidationError, match="needs 2 to 4"):
        services.round_create(
            name="r",
            created_by=personas.curator.user,
            reviewers=[personas.reviewer_a.user],
            lineages=[lineage],
        )


def test_it_builds_a_group_from_a_root_problem_and_its_descendants(personas):
    _, problems = lineage_with_problems(n_evolved=2)
    rnd = services.round_create(
        name="r",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user],
        roots=[problems[0]],
    )
    assert {i.problem for i in GroupItem.objects.filter(group__round=rnd)} == set(problems)


def test_each_group_goes_to_two_distinct_reviewers_with_balanced_load(personas, make_reviewer):
    reviewers = [make_reviewer(f"rev{i}") for i in range(4)]
    lineages = [lineage_with_problems(n_evolved=1, tag=str(i))[0] for i in range(6)]
    rnd = services.round_create(
        name="r",
        created_by=personas.curator.user,
        reviewers=reviewers,
        lineages=lineages,
        rng=random.Random(3),
    )
    for group in rnd.groups.all():
        assert group.assignments.count() == 2
    load = Counter(
        Assignment.objects.filter(group__round=rnd).values_list("reviewer__username", flat=True)
    )
    # 6 groups x 2 reviewers = 12 assignments over 4 reviewers: exactly 3 each.
    assert sorted(load.values()) == [3, 3, 3, 3]


def test_reviewers_per_group_is_configurable_and_capped_by_the_pool(personas):
    lineage, _ = lineage_with_problems(n_evolved=1)
    rnd = services.round_create(
        name="r",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user, personas.reviewer_b.user],
        lineages=[lineage],
        reviewers_per_group=3,
    )
    assert rnd.groups.get().assignments.count() == 2
    assert selectors.round_understaffed_groups(review_round=rnd) == 1


def test_it_never_assigns_a_lineage_to_the_reviewer_who_created_its_campaign(personas):
    campaign = CampaignFactory(created_by=personas.reviewer_a.user)
    lineage, _ = lineage_with_problems(n_evolved=1, campaign=campaign)
    rnd = services.round_create(
        name="r",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user, personas.reviewer_b.user],
        lineages=[lineage],
    )
    assert [a.reviewer for a in rnd.groups.get().assignments.all()] == [personas.reviewer_b.user]


def test_creators_may_review_when_the_round_allows_it(personas):
    campaign = CampaignFactory(created_by=personas.reviewer_a.user)
    lineage, _ = lineage_with_problems(n_evolved=1, campaign=campaign)
    rnd = services.round_create(
        name="r",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user, personas.reviewer_b.user],
        lineages=[lineage],
        exclude_creators=False,
    )
    assert rnd.groups.get().assignments.count() == 2


def test_rerunning_assignment_only_fills_gaps(personas, make_reviewer, review_round):
    assert services.round_assign(review_round=review_round) == 0
    review_round.reviewers_per_group = 3
    review_round.save()
    review_round.reviewers.add(make_reviewer("late"))
    assert services.round_assign(review_round=review_round) == 1
    assert review_round.groups.get().assignments.count() == 3


def test_each_reviewer_gets_an_independent_shuffle(personas, make_reviewer):
    # Over many groups the seed must land in every position, not always first.
    reviewers = [make_reviewer(f"rev{i}") for i in range(2)]
    lineages = [lineage_with_problems(n_evolved=2, tag=str(i))[0] for i in range(12)]
    services.round_create(
        name="r",
        created_by=personas.curator.user,
        reviewers=reviewers,
        lineages=lineages,
        rng=random.Random(7),
    )
    seed_positions = Counter(
        Review.objects.filter(item__lineage_position=0).values_list("position", flat=True)
    )
    assert set(seed_positions) == {0, 1, 2}
    orders = {}
    for a in Assignment.objects.all():
        orders.setdefault(a.group_id, []).append(
            tuple(a.reviews.order_by("position").values_list("item__lineage_position", flat=True))
        )
    assert any(o[0] != o[1] for o in orders.values())


def test_synonyms_resolve_to_one_canonical_tag():
    hld = services.tag_resolve(text="HLD")
    assert hld.name == "heavy-light decomposition"
    assert services.tag_resolve(text="Heavy Light  Decomposition") == hld
    assert services.tag_resolve(text="heavy-light decomposition") == hld
    assert [t.name for t in services.tags_resolve(text="dp, DP, dynamic programming, hld")] == [
        "dynamic programming",
        "heavy-light decomposition",
    ]


def test_an_unknown_tag_becomes_a_proposal_that_a_curator_can_merge(personas):
    tag = services.tag_resolve(text="Slope trick", proposed_by=personas.reviewer_a.user)
    assert tag.status == TagStatus.PROPOSED
    into = Tag.objects.get(name="dynamic programming")
    services.tag_merge(tag=tag, into=into)
    assert services.tag_resolve(text="slope-trick") == into
    tag.refresh_from_db()
    assert tag.status == TagStatus.MERGED and tag.merged_into == into


def test_merging_repoints_submitted_reviews(review_round, personas):
    assignment = Assignment.objects.get(reviewer=personas.reviewer_a.user)
    services.assignment_submit(
        assignment=assignment, data=_group_data(assignment, tags="aliens trick")
    )
    proposed = Tag.objects.get(name="aliens trick")
    into = Tag.objects.get(name="binary search")
    services.tag_merge(tag=proposed, into=into)
    names = {t.name for r in assignment.reviews.all() for t in r.tags.all()}
    assert names == {"binary search"}


def test_approving_a_proposal_adds_it_to_the_vocabulary(personas):
    tag = services.tag_resolve(text="slope trick", proposed_by=personas.reviewer_a.user)
    services.tag_approve(tag=tag)
    assert [
        t.name
        for t in selectors.reviewer_tag_suggestions(
            reviewer=personas.reviewer_b.user, query="slope"
        )
    ] == ["slope trick"]
    with pytest.raises(ValidationError):
        services.tag_approve(tag=tag)


def test_suggestions_hide_other_reviewers_proposals(personas):
    services.tag_resolve(text="slope trick", proposed_by=personas.reviewer_a.user)
    assert (
        selectors.reviewer_tag_suggestions(reviewer=personas.reviewer_b.user, query="slope") == []
    )
    assert selectors.reviewer_tag_suggestions(reviewer=personas.reviewer_a.user, query="slope")


def test_suggestions_match_synonyms():
    [s] = selectors.reviewer_tag_suggestions(reviewer=None, query="hld")
    assert (s.name, s.matched) == ("heavy-light decomposition", "hld")


def test_a_draft_keeps_valid_fields_and_refuses_invalid_ones_by_name(review_round, personas):
    assignment = Assignment.objects.get(reviewer=personas.reviewer_a.user)
    item = assignment.reviews.first().item
    data = answers(item.opaque_id, clarity="9", cf_rating="1950", justification="half")
    result = services.assignment_save_draft(assignment=assignment, data=data)
    assert result.saved == 1
    assert set(result.rejected) == {f"{item.opaque_id}-clarity", f"{item.opaque_id}-cf_rating"}
    review = Review.objects.get(assignment=assignment, item=item)
    assert review.clarity is None and review.cf_rating is None
    assert (review.novelty, review.justification, review.seconds_spent) == (3, "half", 30)
    assert review.submitted_at is None


def test_elapsed_time_per_save_is_capped(review_round, personas):
    assignment = Assignment.objects.get(reviewer=personas.reviewer_a.user)
    item = assignment.reviews.first().item
    services.assignment_save_draft(
        assignment=assignment, data=answers(item.opaque_id, elapsed=99999)
    )
    assert (
        Review.objects.get(assignment=assignment, item=item).seconds_spent
        == services.MAX_ELAPSED_PER_SAVE
    )


def test_submit_requires_every_field_and_the_certification(review_round, personas):
    assignment = Assignment.objects.get(reviewer=personas.reviewer_a.user)
    result = services.assignment_submit(
        assignment=assignment, data=_group_data(assignment, certify=False)
    )
    assert not result.ok and result.certify_error
    bad = _group_data(
        assignment, validity="invalid", validity_reason="", tags=" , ", cf_rating="1950"
    )
    result = services.assignment_submit(assignment=assignment, data=bad)
    assert not result.ok
    errors = next(iter(result.forms.values())).errors
    assert set(errors) == {"validity_reason", "tags", "cf_rating"}
    assert Assignment.objects.get(pk=assignment.pk).submitted_at is None


def test_submit_records_everything_and_locks_the_group(review_round, personas):
    assignment = Assignment.objects.get(reviewer=personas.reviewer_a.user)
    assert services.assignment_submit(assignment=assignment, data=_group_data(assignment)).ok
    assignment.refresh_from_db()
    assert assignment.submitted_at and assignment.certified_no_ai
    review = assignment.reviews.first()
    assert review.submitted_at and review.seconds_spent == 30
    assert {t.name for t in review.tags.all()} == {
        "dynamic programming",
        "heavy-light decomposition",
    }
    # The same answers again (a second click, a second tab) are a success that changes nothing;
    # other answers are refused.
    again = services.assignment_submit(assignment=assignment, data=_group_data(assignment))
    assert again.ok and again.already
    with pytest.raises(services.AlreadySubmitted):
        services.assignment_submit(assignment=assignment, data=_group_data(assignment, clarity=2))
    with pytest.raises(services.AlreadySubmitted):
        services.assignment_save_draft(assignment=assignment, data=_group_data(assignment))


def test_a_closed_round_accepts_no_answers(review_round, personas):
    services.round_set_status(review_round=review_round, status="closed")
    assignment = Assignment.objects.get(reviewer=personas.reviewer_a.user)
    with pytest.raises(ValidationError, match="closed"):
        services.assignment_submit(assignment=assignment, data=_group_data(assignment))


def _submit_both(review_round, personas, a_overrides, b_overrides):
    a = Assignment.objects.get(reviewer=personas.reviewer_a.user)
    b = Assignment.objects.get(reviewer=personas.reviewer_b.user)
    assert services.assignment_submit(assignment=a, data=_group_data(a, **a_overrides)).ok
    assert services.assignment_submit(assignment=b, data=_group_data(b, **b_overrides)).ok


def test_ratings_two_apart_or_conflicting_validity_open_adjudications(review_round, personas):
    _submit_both(
        review_round,
        personas,
        {"difficulty": 2, "novelty": 3},
        {"difficulty": 4, "novelty": 4, "validity": "invalid", "validity_reason": "no"},
    )
    dims = Counter(Adjudication.objects.values_list("dimension", flat=True))
    assert dims == {"difficulty": 3, "validity": 3}  # three problems in the group


def test_resolving_an_adjudication_records_it_and_overrides_the_score(review_round, personas):
    _submit_both(review_round, personas, {"difficulty": 1}, {"difficulty": 5})
    adj = Adjudication.objects.filter(dimension="difficulty").first()
    with pytest.raises(ValidationError):
        services.adjudication_resolve(adjudication=adj, by=personas.curator.user, resolution=" ")
    services.adjudication_resolve(
        adjudication=adj, by=personas.curator.user, resolution="B is right", value="5"
    )
    adj.refresh_from_db()
    assert (adj.status, adj.resolved_by, adj.resolved_value) == (
        "resolved",
        personas.curator.user,
        "5",
    )
    [agg] = [
        a for a in selectors.round_item_aggregates(review_round=review_round) if a.item == adj.item
    ]
    assert agg.means["difficulty"] == 3.0 and agg.final["difficulty"] == 5.0


def test_aggregates_average_ratings_and_union_tags(review_round, personas):
    _submit_both(
        review_round,
        personas,
        {"clarity": 4, "cf_rating": 1800, "tags": "dp"},
        {"clarity": 5, "cf_rating": 2100, "tags": "heavy light decomposition, Segment tree"},
    )
    for agg in selectors.round_item_aggregates(review_round=review_round):
        assert agg.n_reviews == 2
        assert agg.means["clarity"] == 4.5 and agg.cf_estimate == 1950
        assert agg.tags == ["dynamic programming", "heavy-light decomposition", "segment tree"]
        assert agg.final["validity"] == "valid"


def test_an_override_needs_a_reason_and_a_value_in_range(review_round, personas):
    item = GroupItem.objects.filter(group__round=review_round).first()
    with pytest.raises(ValidationError, match="reason"):
        services.score_override_create(
            item=item, dimension="quality", value="4", reason="", by=None
        )
    with pytest.raises(ValidationError):
        services.score_override_create(
            item=item, dimension="quality", value="7", reason="x", by=None
        )
    with pytest.raises(ValidationError):
        services.score_override_create(
            item=item, dimension="cf_rating", value="1950", reason="x", by=None
        )
    services.score_override_create(
        item=item, dimension="cf_rating", value="2400", reason="judge", by=None
    )
    [agg] = [
        a for a in selectors.round_item_aggregates(review_round=review_round) if a.item == item
    ]
    assert agg.final["cf_rating"] == 2400.0 and agg.overrides["cf_rating"].reason == "judge"


def test_round_agreement_equals_the_statistics_on_the_same_ratings(review_round, personas):
    from review.agreement import krippendorff_alpha, weighted_cohen_kappa

    a = Assignment.objects.get(reviewer=personas.reviewer_a.user)
    b = Assignment.objects.get(reviewer=personas.reviewer_b.user)
    items = list(GroupItem.objects.filter(group__round=review_round).order_by("lineage_position"))
    ratings_a, ratings_b = [1, 2, 3], [1, 3, 3]
    data_a = {"certify_no_ai": "on"}
    data_b = {"certify_no_ai": "on"}
    for item, ra, rb in zip(items, ratings_a, ratings_b, strict=True):
        data_a.update(answers(item.opaque_id, quality=ra))
        data_b.update(answers(item.opaque_id, quality=rb))
    assert services.assignment_submit(assignment=a, data=data_a).ok
    assert services.assignment_submit(assignment=b, data=data_b).ok
    rows = {r.dimension: r for r in selectors.round_agreement(review_round=review_round)}
    pairs = list(zip(ratings_a, ratings_b, strict=True))
    assert rows["quality"].alpha == pytest.approx(krippendorff_alpha(pairs))
    assert rows["quality"].kappa == pytest.approx(
        weighted_cohen_kappa(pairs, categories=[1, 2, 3, 4, 5])
    )
    assert (rows["quality"].items, rows["quality"].pairs) == (3, 3)
    assert rows["clarity"].alpha is None  # everyone said 4: no variation, alpha undefined


def test_reviewer_queue_lists_only_own_open_groups(review_round, personas):
    other = ProblemFactory()  # noise: unrelated problem
    assert other
    queue = selectors.reviewer_queue(reviewer=personas.reviewer_a.user)
    assert len(queue) == 1 and queue[0].problem_count == 3
    services.round_set_status(review_round=review_round, status="closed")
    assert selectors.reviewer_queue(reviewer=personas.reviewer_a.user) == []
