"""Reasoning items in review rounds: blinded groups of one type, a question-and-answer form,
and the curator's answer verdict replacing the judges' score in the campaign's EMA."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.exceptions import ValidationError

from reasoning.models import ReasoningItem, ResultLogEntry
from review import selectors, services
from review.models import Adjudication, Assignment, GroupItem, GroupKind, ScoreOverride
from tests.reasoning.judged import judged_reasoning
from tests.support.fake_openai import FakeOpenAI

from .factories import lineage_with_problems

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake_server():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def reasoning(fake_server):
    # Run 1: correct, incorrect; run 2: parse failure (0.0), correct. EMA over runs 0.5.
    return judged_reasoning(fake_server, verdicts=[True, False, None, True])


def reasoning_answers(opaque_id: str, **overrides) -> dict[str, str]:
    values = {
        "clarity": "4",
        "difficulty": "3",
        "answer_verdict": "correct",
        "justification": "The final answer follows from the premises.",
        "elapsed": "20",
    }
    values.update({k: str(v) for k, v in overrides.items()})
    return {f"{opaque_id}-{k}": v for k, v in values.items()}


def one_group_round(personas, reasoning, **kwargs):
    groups = selectors.reasoning_group_plan(reasoning=reasoning, group_size=4)
    return services.round_create(
        name="Reasoning SECRET round",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user, personas.reviewer_b.user],
        reasoning_groups=groups,
        **kwargs,
    )


def test_the_plan_cuts_groups_of_one_type_across_difficulties(fake_server):
    rc = judged_reasoning(
        fake_server, verdicts=[True] * 12, types=("alpha_type", "beta_type"), difficulty_end=3
    )
    groups = selectors.reasoning_group_plan(reasoning=rc, group_size=3)
    # 6 judged items per type (2 runs x 3 difficulties): two groups of three per type.
    assert sorted(len(g) for g in groups) == [3, 3, 3, 3]
    for g in groups:
        assert len({i.reasoning_type for i in g}) == 1
        assert sorted(i.difficulty for i in g) == [1, 2, 3]
    assert len(selectors.reasoning_group_plan(reasoning=rc, group_size=4, max_groups=1)) == 1


def test_a_curator_creates_a_reasoning_round_from_the_page(personas, reasoning):
    page = personas.curator.client.get("/review/rounds/new/reasoning/")
    assert page.status_code == 200 and reasoning.campaign.name in page.content.decode()
    response = personas.curator.client.post(
        "/review/rounds/new/reasoning/",
        {
            "name": "Questions round",
            "reasoning": reasoning.pk,
            "group_size": "2",
            "reviewers": [personas.reviewer_a.user.pk, personas.reviewer_b.user.pk],
            "reviewers_per_group": "2",
            "exclude_creators": "on",
        },
    )
    assert response.status_code == 302
    group_items = GroupItem.objects.filter(group__round__name="Questions round")
    assert group_items.count() == 4 and all(i.reasoning_item_id for i in group_items)
    assert {g.kind for g in {i.group for i in group_items}} == {GroupKind.REASONING}
    assert Assignment.objects.filter(group__round__name="Questions round").count() == 4


def test_it_rejects_chosen_items_that_form_no_group(personas, reasoning):
    one = ReasoningItem.objects.filter(reasoning=reasoning).first()
    response = personas.curator.client.post(
        "/review/rounds/new/reasoning/",
        {
            "name": "Too small",
            "reasoning": reasoning.pk,
            "item_ids": str(one.pk),
            "group_size": "2",
            "reviewers": [personas.reviewer_a.user.pk],
            "reviewers_per_group": "1",
        },
    )
    assert response.status_code == 200
    assert "each needs 2 judged items of one type" in response.content.decode()
    with pytest.raises(ValidationError, match="needs 2 to 4 items"):
        services.round_create(
            name="x",
            created_by=personas.curator.user,
            reviewers=[personas.reviewer_a.user],
            reasoning_groups=[[one]],
        )


def test_reviewers_and_visitors_cannot_create_rounds_or_override_answers(personas, reasoning):
    review_round = one_group_round(personas, reasoning)
    item = GroupItem.objects.filter(group__round=review_round).first()
    for persona, status in ((personas.reviewer_a, 403), (personas.anonymous, 302)):
        assert persona.client.get("/review/rounds/new/reasoning/").status_code == status
        response = persona.client.post(
            f"/review/rounds/{review_round.pk}/answer/",
            {"item": item.opaque_id, "verdict": "correct", "reason": "x"},
        )
        assert response.status_code == status
    item.reasoning_item.refresh_from_db()
    assert item.reasoning_item.override_score is None


def test_a_reviewer_rates_question_and_answer_and_the_form_requires_a_verdict(personas, reasoning):
    review_round = one_group_round(personas, reasoning, reviewers_per_group=1)
    assignment = Assignment.objects.get(group__round=review_round)
    client = [
        p for p in (personas.reviewer_a, personas.reviewer_b) if p.user == assignment.reviewer
    ][0].client
    url = f"/review/g/{assignment.opaque_id}/"
    page = client.get(url).content.decode()
    assert page.count("Given answer") == 4 and "ANSWER-SECRET-1" in page
    assert "Codeforces" not in page and "-answer_verdict" in page
    ids = [i.opaque_id for i in GroupItem.objects.filter(group__round=review_round)]
    data = {"certify_no_ai": "on"}
    for opaque in ids:
        data |= reasoning_answers(opaque)
    data |= {f"{ids[0]}-answer_verdict": "", f"{ids[0]}-justification": ""}
    refused = client.post(url, data)
    # Errors name the field as the page labels it, never by its form name.
    refused_page = refused.content.decode()
    assert refused.status_code == 400
    assert "<b>Is the given answer correct?</b>: This field is required" in refused_page
    assert "answer_verdict:" not in refused_page
    assignment.refresh_from_db()
    assert not assignment.is_submitted
    data |= reasoning_answers(ids[0], answer_verdict="incorrect")
    assert client.post(url, data).status_code == 302
    reviews = {r.item.opaque_id: r for r in assignment.reviews.select_related("item")}
    assert reviews[ids[0]].answer_verdict == "incorrect" and reviews[ids[1]].clarity == 4
    assert all(r.submitted_at for r in reviews.values())


def _submit(assignment, verdict_by_item: dict[str, str]) -> None:
    data = {"certify_no_ai": "on"}
    for opaque, verdict in verdict_by_item.items():
        data |= reasoning_answers(opaque, answer_verdict=verdict)
    assert services.assignment_submit(assignment=assignment, data=data).ok


def test_conflicting_verdicts_are_adjudicated_and_the_settled_answer_moves_the_ema(
    personas, reasoning
):
    assert reasoning.ema == pytest.approx(0.5)
    review_round = one_group_round(personas, reasoning)
    # The item judged a parse failure (run 2, difficulty 1): reviewers disagree on it.
    target = GroupItem.objects.get(
        group__round=review_round, reasoning_item__run__number=2, reasoning_item__difficulty=1
    )
    ids = list(
        GroupItem.objects.filter(group__round=review_round).values_list("opaque_id", flat=True)
    )
    first, second = Assignment.objects.filter(group__round=review_round)
    _submit(first, {o: "correct" for o in ids})
    _submit(second, {o: ("incorrect" if o == target.opaque_id else "correct") for o in ids})
    adjudication = Adjudication.objects.get(item=target, dimension="answer")
    assert "correct, incorrect" in adjudication.detail

    response = personas.curator.client.post(
        f"/review/adjudications/{adjudication.pk}/resolve/",
        {"resolution": "The answer is right; the judge failed to parse.", "value": "correct"},
    )
    assert response.status_code == 302
    item = ReasoningItem.objects.get(pk=target.reasoning_item_id)
    assert item.override_score == 1.0 and item.override_by == personas.curator.user
    reasoning.refresh_from_db()
    # Run 2 now scores 1.0: EMA = 0.3 x 1.0 + 0.7 x 0.5.
    assert reasoning.ema == pytest.approx(0.65)
    entry = ResultLogEntry.objects.filter(item=item, event="score_overridden").get()
    assert entry.payload["ema"] == pytest.approx(0.65)
    assert "Reasoning SECRET round" in item.override_reason
    [aggregate] = [
        a for a in selectors.round_item_aggregates(review_round=review_round) if a.item == target
    ]
    assert aggregate.answer_final == "correct" and aggregate.answer_votes == {
        "correct": 1,
        "incorrect": 1,
    }


def test_the_curator_answer_override_page_replaces_and_restores_the_judge_score(
    personas, reasoning
):
    review_round = one_group_round(personas, reasoning)
    target = GroupItem.objects.get(
        group__round=review_round, reasoning_item__run__number=1, reasoning_item__difficulty=1
    )
    url = f"/review/rounds/{review_round.pk}/answer/"
    detail = personas.curator.client.get(f"/review/rounds/{review_round.pk}/").content.decode()
    assert 'id="answer-override-form"' in detail and "Reasoning answers" in detail

    no_reason = personas.curator.client.post(
        url, {"item": target.opaque_id, "verdict": "incorrect", "reason": ""}, follow=True
    )
    assert "needs a verdict and a reason" in no_reason.content.decode()
    assert ReasoningItem.objects.get(pk=target.reasoning_item_id).override_score is None

    personas.curator.client.post(
        url, {"item": target.opaque_id, "verdict": "incorrect", "reason": "wrong unit"}
    )
    reasoning.refresh_from_db()
    # Run 1 drops from 0.5 to 0.0; run 2 stays 0.5: EMA = 0.3 x 0.5 + 0.7 x 0.0.
    assert reasoning.ema == pytest.approx(0.15)
    assert ScoreOverride.objects.get(item=target, dimension="answer").value == "incorrect"

    personas.curator.client.post(
        url, {"item": target.opaque_id, "verdict": "clear", "reason": "undo"}
    )
    reasoning.refresh_from_db()
    assert reasoning.ema == pytest.approx(0.5)
    assert ReasoningItem.objects.get(pk=target.reasoning_item_id).override_score is None


def test_an_answer_override_is_refused_for_a_coding_problem(personas):
    lineage, _ = lineage_with_problems(n_evolved=1, tag="c")
    review_round = services.round_create(
        name="coding",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user],
        lineages=[lineage],
    )
    item = GroupItem.objects.filter(group__round=review_round).first()
    with pytest.raises(ValidationError, match="Only reasoning items"):
        services.score_override_create(
            item=item, dimension="answer", value="correct", reason="x", by=personas.curator.user
        )


def test_the_api_serves_questions_to_reviewers_and_verdicts_to_curators(personas, reasoning):
    groups = [
        [i.pk for i in g] for g in selectors.reasoning_group_plan(reasoning=reasoning, group_size=2)
    ]
    created = personas.curator.client.post(
        "/api/review/rounds",
        json.dumps(
            {
                "name": "api questions",
                "reasoning_item_groups": groups,
                "reviewers": [personas.reviewer_a.user.username],
                "reviewers_per_group": 1,
            }
        ),
        content_type="application/json",
    )
    assert created.status_code == 201, created.content
    round_id = created.json()["id"]
    queue = personas.reviewer_a.client.get("/api/review/queue").json()
    body = personas.reviewer_a.client.get(f"/api/review/groups/{queue[0]['opaque_id']}").json()
    assert body["problems"] == [] and len(body["questions"]) == 2
    assert "ANSWER-SECRET" in body["questions"][0]["answer_html"]
    items = [
        {
            "opaque_id": q["opaque_id"],
            "clarity": 5,
            "difficulty": 2,
            "answer_verdict": "correct",
            "justification": "checked by hand",
        }
        for q in body["questions"]
    ]
    submitted = personas.reviewer_a.client.post(
        f"/api/review/groups/{queue[0]['opaque_id']}/submit",
        json.dumps({"items": items, "certify_no_ai": True}),
        content_type="application/json",
    )
    assert submitted.json()["submitted"] is True
    rows = personas.curator.client.get(f"/api/review/rounds/{round_id}/aggregates").json()
    rated = [r for r in rows if r["n_reviews"]]
    assert rated and all(r["kind"] == "reasoning" and r["answer_final"] == "correct" for r in rated)
    assert (
        personas.reviewer_a.client.get(f"/api/review/rounds/{round_id}/aggregates").status_code
        == 403
    )
    export = personas.curator.client.get(f"/review/rounds/{round_id}/export.csv").content.decode()
    assert "answer_verdict" in export.splitlines()[0] and ",correct," in export
    # A question row's kind is its problem source's name (review never writes it down).
    rows = [r for r in csv.DictReader(io.StringIO(export)) if not r["problem_public_id"]]
    assert rows and {r["problem_kind"] for r in rows} == {"reasoning"}
