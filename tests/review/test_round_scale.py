"""Creating a review round at scale (issue #36): its queries do not grow with its groups, and the
creators of the campaigns behind a group's problems are still never assigned to it."""

from __future__ import annotations

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from review import services
from review.models import Assignment, Review
from tests.factories import (
    CampaignFactory,
    CandidateFactory,
    LineageFactory,
    ProblemFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def _round_queries(groups: int, reviewers: list) -> int:
    problems = ProblemFactory.create_batch(groups * 3)
    plan = [problems[i : i + 3] for i in range(0, len(problems), 3)]
    with CaptureQueriesContext(connection) as queries:
        services.round_create(
            name=f"round of {groups}",
            created_by=reviewers[0],
            reviewers=reviewers,
            problem_groups=plan,
            rng=random.Random(1),
        )
    assert Assignment.objects.filter(group__round__name=f"round of {groups}").count() == groups * 2
    assert Review.objects.filter(assignment__group__round__name=f"round of {groups}").count() == (
        groups * 2 * 3
    )
    return len(queries)


def test_a_round_of_many_groups_runs_as_many_queries_as_a_round_of_few():
    reviewers = UserFactory.create_batch(4)
    few = _round_queries(3, reviewers)
    many = _round_queries(30, reviewers)
    assert many == few


def test_a_campaigns_creator_is_not_assigned_its_problems():
    creator, *others = UserFactory.create_batch(3)
    campaign = CampaignFactory(created_by=creator)
    seed = ProblemFactory()
    evolved = ProblemFactory()
    CandidateFactory(
        lineage=LineageFactory(campaign=campaign, seed=seed),
        decision="accepted",
        accepted_problem=evolved,
    )
    plain = ProblemFactory.create_batch(2)
    review_round = services.round_create(
        name="creators",
        created_by=others[0],
        reviewers=[creator, *others],
        problem_groups=[[seed, evolved], plain],
        reviewers_per_group=3,
        rng=random.Random(2),
    )
    assigned = {
        group.root_problem_id: {a.reviewer_id for a in group.assignments.all()}
        for group in review_round.groups.all()
    }
    assert assigned[seed.pk] == {u.pk for u in others}
    assert assigned[plain[0].pk] == {creator.pk, *(u.pk for u in others)}
