"""Released reasoning questions that reviewers rate blind: the public pages leave out their
type and difficulty (which the review page never shows), and the question leaderboard its
scores per type and per level, until every reviewer has submitted."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils import timezone

from releases import services
from releases.models import QuestionRun
from review import selectors as review_selectors
from review import services as review_services
from review.models import Assignment
from tests.factories import ModelEndpointFactory
from tests.reasoning.judged import judged_reasoning
from tests.support.fake_openai import FakeOpenAI
from tests.support.scoring import complete

from .blind_review import visible_text
from .test_reasoning_questions import correct_items, draft

pytestmark = pytest.mark.django_db


@pytest.fixture
def released(personas):
    with FakeOpenAI() as server:
        reasoning = judged_reasoning(
            server, verdicts=[True, True, True, True], types=("deduction_secret_type",)
        )
    release = _published(reasoning)
    run = QuestionRun.objects.create(
        release=release,
        endpoint=ModelEndpointFactory(name="answerer", model="answerer-model"),
        label="answer-model-one",
    )
    complete(  # as the scoring service completes it
        run,
        {
            "score": {"value": 0.5, "low": 0.2, "high": 0.8, "n": 2},
            "breakdown": {
                "type": {"deduction_secret_type": {"value": 0.5, "low": 0.2, "high": 0.8, "n": 2}},
                "level": {"1": {"value": 0.5, "low": 0.2, "high": 0.8, "n": 2}},
            },
            "questions": 2,
        },
    )
    review_round = review_services.round_create(
        name="blind questions",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user, personas.reviewer_b.user],
        reasoning_groups=review_selectors.reasoning_group_plan(reasoning=reasoning, group_size=2),
    )
    return release, review_round


def _published(reasoning):
    """A published release of two of the campaign's correctly answered questions."""
    release = draft()
    services.release_questions_add(release=release, items=correct_items(reasoning)[:2])
    release = services.release_freeze(release=release)
    return services.release_publish(release=release)


def _rows(html: str, public_id: str) -> list[str]:
    return [
        visible_text(r) for r in re.findall(r"<tr\b.*?</tr>", html, flags=re.S) if public_id in r
    ]


def test_questions_under_blind_review_show_neither_type_nor_difficulty(released):
    release, review_round = released
    base = f"/releases/{release.benchmark.slug}/v{release.version}/"
    reviewed = set(review_round.groups.values_list("items__reasoning_item_id", flat=True)) & set(
        release.questions.values_list("reasoning_item_id", flat=True)
    )
    assert reviewed, "no released question is in the round"
    detail = Client().get(base).content.decode()
    board = Client().get(base + "questions/leaderboard/").content.decode()
    for q in release.questions.filter(reasoning_item_id__in=reviewed):
        [row] = _rows(detail, q.public_id)
        assert q.reasoning_type not in row and "/ 10" not in row, row
        assert "withheld during blind review" in row
    assert "deduction_secret_type" not in visible_text(board)
    assert "level 1" not in visible_text(board)
    assert "withheld during blind review" in board

    Assignment.objects.filter(group__round=review_round).update(
        submitted_at=timezone.now(), certified_no_ai=True
    )
    detail = Client().get(base).content.decode()
    board = Client().get(base + "questions/leaderboard/").content.decode()
    for q in release.questions.filter(reasoning_item_id__in=reviewed):
        [row] = _rows(detail, q.public_id)
        assert q.reasoning_type in row and f"{q.difficulty} / 10" in row
    assert "deduction_secret_type" in board and "level 1" in board
