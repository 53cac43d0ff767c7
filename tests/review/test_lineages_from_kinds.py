"""Review reaches a kind's lineages and tags only through what the kind declares
(``Kind.lineages``, ``Kind.problem_tags``), and who made a group's problems through the kinds'
own answer (``campaign_problems``): the lineage groups, the round form's tag filter and the
creator rule keep working with no review code reading BenchEvolver's tables."""

from __future__ import annotations

import pytest

from evolution.streams.kinds import registered
from review import selectors, services
from tests import factories
from tests.review.factories import lineage_with_problems

pytestmark = pytest.mark.django_db


def test_only_benchevolver_declares_lineages_and_review_finds_it_by_its_table():
    assert [k.name for k in registered() if k.lineages] == ["benchevolver"]
    assert [k.name for k in registered() if k.problem_tags] == ["benchevolver"]
    assert selectors.lineage_source().model == "benchevolver.Lineage"


def test_a_lineage_group_is_its_seed_then_its_accepted_problems_by_round():
    lineage, problems = lineage_with_problems(n_evolved=2)
    # A candidate of the same lineage that was not accepted is no part of it.
    factories.CandidateFactory(lineage=lineage, decision="not_harder", round=9)
    assert selectors.lineage_problem_list(lineage=lineage) == problems
    [row] = [lin for lin in selectors.lineage_choice_list() if lin.pk == lineage.pk]
    label = selectors.lineage_source().label(row)
    assert label == f"{lineage.campaign.name} · {lineage.seed.title} (2 accepted)"
    assert selectors.lineage_list([lineage.pk, 10**9]) == [lineage]


def test_the_tag_filter_matches_the_mutation_family_the_kind_gave_a_problem():
    lineage, (_seed, evolved) = lineage_with_problems(n_evolved=1)
    lineage.candidates.update(family="Two-Pointers")
    chosen = selectors.coding_problem_choice(
        campaigns=[lineage.campaign], filters=selectors.ProblemFilter(tag="two-pointers")
    )
    assert chosen == [evolved]
    nothing = selectors.coding_problem_choice(
        campaigns=[lineage.campaign], filters=selectors.ProblemFilter(tag="greedy")
    )
    assert nothing == []


def test_the_creator_of_a_campaign_that_made_a_groups_problem_never_reviews_it():
    # The creator launched the campaign behind the *second* lineage's accepted problem, which
    # a curator put in a group of its own: the rule follows the problem, not the group's lineage.
    creator, other = factories.UserFactory(), factories.UserFactory()
    curator = factories.UserFactory()
    theirs = factories.CampaignFactory(created_by=creator)
    _lineage, (seed, evolved) = lineage_with_problems(n_evolved=1, campaign=theirs)
    _other_lineage, (other_seed, _) = lineage_with_problems(n_evolved=1)
    rnd = services.round_create(
        name="r",
        created_by=curator,
        reviewers=[creator, other],
        problem_groups=[[other_seed, evolved]],
        reviewers_per_group=2,
    )
    assert [a.reviewer for a in rnd.groups.get().assignments.all()] == [other]
