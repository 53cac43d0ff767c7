"""Reasoning questions in releases: selection, freeze (snapshot, hash, immutability), the
JSONL export, the public pages (questions shown, reference answers never) and permissions."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, InternalError, connection, transaction

from reasoning.models import ReasoningItem
from reasoning.services import item_override_score
from releases import content, exports, selectors, services
from releases.models import FrozenReleaseError, ReleaseQuestion
from tests.reasoning.judged import judged_reasoning
from tests.support.fake_openai import FakeOpenAI
from tests.support.gate_rules import SELECTION_TIME_OK

from .builders import crafted_world

pytestmark = pytest.mark.django_db
DB_ERRORS = (IntegrityError, InternalError)


@pytest.fixture
def fake_server():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def reasoning(fake_server):
    # Run 1: d1 correct, d2 incorrect; run 2: d1 parse failure (0.0), d2 correct.
    return judged_reasoning(fake_server, verdicts=[True, False, None, True])


def correct_items(reasoning) -> list[ReasoningItem]:
    return [i for i in ReasoningItem.objects.filter(reasoning=reasoning) if i.score == 1.0]


def draft(name: str = "Reasoning-Bench", **kwargs):
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name=name)
    return services.release_create(benchmark=bench, **kwargs)


def frozen_questions(reasoning, *, publish=False):
    release = draft()
    assert services.release_questions_add(release=release, items=correct_items(reasoning)) == 2
    release = services.release_freeze(release=release)
    return services.release_publish(release=release) if publish else release


def test_only_items_whose_answer_counts_as_correct_can_be_added(reasoning):
    release = draft()
    wrong = ReasoningItem.objects.get(reasoning=reasoning, run__number=1, difficulty=2)
    with pytest.raises(ValidationError, match="not judged correct"):
        services.release_questions_add(release=release, items=[*correct_items(reasoning), wrong])
    assert not release.questions.exists()
    candidates = services.question_candidates(release=release, reasoning=reasoning)
    assert sorted(i.pk for i in candidates) == sorted(i.pk for i in correct_items(reasoning))


def test_a_questions_only_release_freezes_without_a_gate_and_hashes_its_questions(reasoning):
    release = frozen_questions(reasoning)
    questions = list(release.questions.order_by("position"))
    assert release.state == "frozen" and release.item_count == 2 and len(questions) == 2
    for q in questions:
        assert (
            q.reference_answer.startswith("Step by step")
            and "ANSWER-SECRET" in q.record["reference_answer"]
        )
        assert q.content_hash == content.question_hash(q.record)
    assert release.hash_format == content.FORMAT_V2
    assert release.content_hash == content.release_hash_v2(
        content.release_identity(release),
        [
            (q.public_id, q.content_hash, content.listing_hash(content.question_listing(q)))
            for q in questions
        ],
    )
    # Anyone holding the JSONL export can recompute the published hash.
    lines = list(exports.export_jsonl(release))
    assert len(lines) == 2 and '"question":' in lines[0]
    # The kind is the problem source's name (releases never write it down themselves).
    assert [json.loads(line)["kind"] for line in lines] == ["reasoning", "reasoning"]
    assert content.release_hash_from_lines(lines) == release.content_hash


def test_the_hash_changes_when_a_reference_answer_changes(reasoning):
    record = frozen_questions(reasoning).questions.first().record
    assert content.question_hash({**record, "reference_answer": "another"}) != (
        content.question_hash(record)
    )


def test_a_mixed_release_hashes_problems_and_questions_together(db, reasoning):
    world = crafted_world()
    release = draft(name="Mixed", campaigns=[world.campaign])
    services.gate_run_create(release=release)
    services.release_questions_add(release=release, items=correct_items(reasoning))
    release = services.release_freeze(release=release)
    pairs = [(i.public_id, i.content_hash) for i in release.items.all()]
    question_pairs = [(q.public_id, q.content_hash) for q in release.questions.all()]
    assert pairs and len(question_pairs) == 2
    assert release.content_hash == content.compute_release_hash(release)
    assert release.content_hash != content.compute_release_hash(release, questions=[])
    # In hash format 1 too the questions join the problems' pairs.
    v1 = content.compute_release_hash(release, hash_format=content.FORMAT_V1)
    assert v1 == content.release_hash(pairs + question_pairs) != content.release_hash(pairs)
    assert release.item_count == len(pairs) + 2
    assert content.release_hash_from_lines(exports.export_jsonl(release)) == release.content_hash


def test_frozen_questions_refuse_every_change(reasoning):
    release = frozen_questions(reasoning)
    question = release.questions.first()
    question.reference_answer = "tampered"
    with pytest.raises(FrozenReleaseError):
        question.save()
    with pytest.raises(FrozenReleaseError):
        question.delete()
    with (
        pytest.raises(DB_ERRORS, match="immutable"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "UPDATE releases_releasequestion SET reference_answer = 'x' WHERE id = %s",
            [question.pk],
        )
    with pytest.raises(DB_ERRORS), transaction.atomic():
        ReleaseQuestion.objects.filter(release=release).update(question="tampered")
    with pytest.raises(DB_ERRORS), transaction.atomic():
        ReleaseQuestion.objects.filter(release=release).delete()
    with pytest.raises(ValidationError, match="only a draft"):
        services.release_questions_add(release=release, items=correct_items(reasoning))
    # A later human override changes the campaign, never the frozen snapshot.
    item_override_score(
        item_id=question.reasoning_item_id, score=0.0, reason="wrong after all", user=None
    )
    question.refresh_from_db()
    assert question.reference_answer != "tampered" and question.provenance["score"] == 1.0


def test_freezing_refuses_a_question_whose_answer_was_overridden_to_incorrect(reasoning):
    release = draft()
    services.release_questions_add(release=release, items=correct_items(reasoning))
    first = release.questions.first()
    item_override_score(item_id=first.reasoning_item_id, score=0.0, reason="wrong", user=None)
    with pytest.raises(ValidationError, match="not judged correct"):
        services.release_freeze(release=release)
    services.release_question_remove(release=release, public_id=first.public_id)
    assert services.release_freeze(release=release).item_count == 1


def test_the_next_version_carries_the_questions_and_the_changelog_follows_them(reasoning):
    release = frozen_questions(reasoning)
    nxt = services.release_next(release=release)
    assert nxt.questions.count() == 2
    services.release_question_remove(release=nxt, public_id=nxt.questions.first().public_id)
    nxt = services.release_freeze(release=nxt)
    log = selectors.release_changelog(release=nxt)
    assert len(log.removed) == 1 and log.unchanged == 1


def test_the_public_pages_show_questions_but_never_reference_answers(personas, reasoning):
    release = frozen_questions(reasoning, publish=True)
    base = f"/releases/{release.benchmark.slug}/v{release.version}/"
    detail = personas.anonymous.client.get(base).content.decode()
    for q in release.questions.all():
        assert q.public_id in detail and q.question[:40] in detail
    assert "2</b>reasoning questions" in detail
    pages = [detail] + [
        personas.anonymous.client.get(url).content.decode()
        for url in ("/releases/", base + "card.md", base + "leaderboard/")
    ]
    for page in pages:
        assert "ANSWER-SECRET" not in page and "Final answer" not in page
        assert "rationale-SECRET" not in page
    assert selectors.public_release_questions(release=release)[0].__dataclass_fields__.keys() == {
        "public_id",
        "reasoning_type",
        "difficulty",
        "question",
        "withheld",  # type and difficulty left out while the question is rated blind
    }


def test_only_curators_add_questions_to_a_draft(personas, reasoning):
    release = draft()
    url = f"/curate/releases/{release.pk}/questions/"
    assert personas.reviewer_a.client.post(url, {"reasoning": reasoning.pk}).status_code == 403
    assert personas.anonymous.client.post(url, {"reasoning": reasoning.pk}).status_code == 302
    assert not release.questions.exists()
    response = personas.curator.client.post(url, {"reasoning": reasoning.pk}, follow=True)
    assert "2 question(s) added." in response.content.decode()
    page = personas.curator.client.get(f"/curate/releases/{release.pk}/").content.decode()
    assert "ANSWER-SECRET" in page  # curators see the reference answers
    freeze = personas.curator.client.post(
        f"/curate/releases/{release.pk}/freeze/", {"confirm": "freeze"}, follow=True
    )
    assert "Frozen: 2 items" in freeze.content.decode()
    refused = personas.curator.client.post(
        f"/curate/releases/{release.pk}/questions/remove/",
        {"public_id": release.questions.first().public_id},
        follow=True,
    )
    assert "only a draft can change" in refused.content.decode()
    assert release.questions.count() == 2
