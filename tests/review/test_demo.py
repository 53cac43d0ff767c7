import pytest
from django.core.management import call_command

from review.demo import DEMO_ROUND
from review.models import Assignment, ReviewRound
from review.selectors import reviewer_queue, round_agreement

from .factories import lineage_with_problems

pytestmark = pytest.mark.django_db


def test_demo_round_has_a_rated_group_and_a_waiting_one(personas):
    for i in range(2):
        lineage_with_problems(n_evolved=2, tag=f"demo{i}")
    call_command("review_demo", curator="cory_curator", reviewers="rae_reviewer,rob_reviewer")
    call_command("review_demo", curator="cory_curator", reviewers="rae_reviewer,rob_reviewer")
    review_round = ReviewRound.objects.get(name=DEMO_ROUND)
    assert (
        Assignment.objects.filter(group__round=review_round, submitted_at__isnull=False).count()
        == 2
    )
    queue = reviewer_queue(reviewer=personas.reviewer_a.user)
    assert [e.submitted for e in queue] == [False, True]
    quality = next(
        r for r in round_agreement(review_round=review_round) if r.dimension == "quality"
    )
    assert quality.pairs == 3 and quality.alpha is not None


def test_demo_round_is_skipped_without_accepted_problems(personas, capsys):
    call_command("review_demo", curator="cory_curator", reviewers="rae_reviewer,rob_reviewer")
    assert "no demo review round" in capsys.readouterr().out


def test_demo_ratings_tag_each_problem_with_its_own_family(personas):
    """(issue: demo problems carried tags by position: "segment tree, HLD" on a running sum.)"""
    from evolution.benchevolver.models import Candidate
    from review.models import Review

    for i in range(2):
        lineage_with_problems(n_evolved=2, tag=f"tags{i}")
    Candidate.objects.exclude(accepted_problem=None).update(family="two pointers")
    call_command("review_demo", curator="cory_curator", reviewers="rae_reviewer,rob_reviewer")
    rated = Review.objects.filter(assignment__submitted_at__isnull=False).select_related(
        "item__problem"
    )
    evolved_rated = [
        r for r in rated if Candidate.objects.filter(accepted_problem=r.item.problem).exists()
    ]
    assert evolved_rated and len(evolved_rated) < rated.count()  # evolved ones and seeds
    for review in rated:
        names = {t.name for t in review.tags.all()}
        evolved = Candidate.objects.filter(accepted_problem=review.item.problem).exists()
        assert names == ({"two pointers"} if evolved else {"implementation"}), names
