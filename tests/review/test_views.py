import csv
import io
import json

import pytest
from django.urls import reverse

from review import services
from review.models import Assignment, GroupItem

from .conftest import answers

pytestmark = pytest.mark.django_db


def _submit(assignment, **overrides):
    data = {"certify_no_ai": "on"}
    for review in assignment.reviews.select_related("item"):
        data.update(answers(review.item.opaque_id, **overrides))
    assert services.assignment_submit(assignment=assignment, data=data).ok


def test_a_plain_post_without_javascript_submits_the_group(personas, review_round):
    a = Assignment.objects.get(reviewer=personas.reviewer_a.user)
    client = personas.reviewer_a.client
    page = client.get(reverse("review:group", args=[a.opaque_id]))
    assert page.status_code == 200 and b"Submit group" in page.content
    data = {"certify_no_ai": "on"}
    for review in a.reviews.select_related("item"):
        data.update(answers(review.item.opaque_id))
    response = client.post(reverse("review:group", args=[a.opaque_id]), data)
    assert response.status_code == 302 and response["Location"] == reverse("review:queue")
    a.refresh_from_db()
    assert a.submitted_at is not None


def test_a_failed_submit_shows_errors_and_keeps_the_draft(personas, review_round):
    a = Assignment.objects.get(reviewer=personas.reviewer_a.user)
    item = a.reviews.first().item
    data = answers(item.opaque_id, validity="invalid", validity_reason="", justification="kept")
    response = personas.reviewer_a.client.post(reverse("review:group", args=[a.opaque_id]), data)
    assert response.status_code == 400
    body = response.content.decode()
    assert "Say why the problem is not valid." in body
    assert "Certify that no generative AI was used" in body
    assert ">kept</textarea>" in body


def test_autosave_answers_with_the_status_fragment(personas, review_round):
    a = Assignment.objects.get(reviewer=personas.reviewer_a.user)
    item = a.reviews.first().item
    response = personas.reviewer_a.client.post(
        reverse("review:autosave", args=[a.opaque_id]),
        answers(item.opaque_id, justification="draft text"),
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert response.content.decode().strip().startswith('<span id="save-status"')
    assert "Draft saved" in response.content.decode()
    assert a.reviews.filter(item=item, justification="draft text").exists()


def test_tag_suggestions_complete_the_last_token(personas):
    response = personas.reviewer_a.client.get(reverse("review:tag_suggest"), {"x-tags": "dp, hl"})
    assert 'data-name="heavy-light decomposition"' in response.content.decode()


def test_the_round_page_shows_progress_agreement_disagreements_and_overrides(
    personas, review_round
):
    a = Assignment.objects.get(reviewer=personas.reviewer_a.user)
    b = Assignment.objects.get(reviewer=personas.reviewer_b.user)
    _submit(a, quality=1)
    _submit(b, quality=4)
    item = GroupItem.objects.filter(group__round=review_round).first()
    response = personas.curator.client.post(
        reverse("review:score_override", args=[review_round.pk]),
        {"item": item.opaque_id, "dimension": "quality", "value": "3", "reason": "read it myself"},
    )
    assert response.status_code == 302
    body = personas.curator.client.get(
        reverse("review:round_detail", args=[review_round.pk])
    ).content.decode()
    assert "rae_reviewer" in body and "rob_reviewer" in body
    assert "Krippendorff" in body
    assert "quality ratings [1, 4] differ by 3" in body
    assert "quality = 3" in body and "(automatic: 2.5)" in body and "read it myself" in body


def test_exports_hold_every_review_in_csv_and_jsonl(personas, review_round):
    _submit(Assignment.objects.get(reviewer=personas.reviewer_a.user))
    client = personas.curator.client
    csv_body = client.get(
        reverse("review:round_export", args=[review_round.pk, "csv"])
    ).content.decode()
    rows = list(csv.DictReader(io.StringIO(csv_body)))
    assert len(rows) == 6  # 3 problems x 2 reviewers, drafts included
    assert {r["status"] for r in rows} == {"submitted", "draft"}
    submitted = [r for r in rows if r["status"] == "submitted"]
    assert all(r["tags"] == "dynamic programming|heavy-light decomposition" for r in submitted)
    jsonl = client.get(reverse("review:round_export", args=[review_round.pk, "jsonl"]))
    lines = [json.loads(line) for line in b"".join(jsonl.streaming_content).decode().splitlines()]
    assert len(lines) == 6 and {line["problem_public_id"] for line in lines} == {
        p.public_id for p in review_round.problems
    }
    assert client.get(f"/review/rounds/{review_round.pk}/export.xml").status_code == 404


def test_a_curator_creates_a_round_from_the_form(personas):
    from review.models import ReviewRound

    from .factories import lineage_with_problems

    lineage, _ = lineage_with_problems(n_evolved=1, tag="form")
    client = personas.curator.client
    page = client.get(reverse("review:round_create")).content.decode()
    assert "Seed title SECRET form" in page  # curators see provenance
    response = client.post(
        reverse("review:round_create"),
        {
            "name": "Form round",
            "lineages": [lineage.pk],
            "reviewers": [personas.reviewer_a.user.pk, personas.reviewer_b.user.pk],
            "reviewers_per_group": 2,
            "exclude_creators": "on",
        },
    )
    review_round = ReviewRound.objects.get(name="Form round")
    assert response.status_code == 302
    assert response["Location"] == reverse("review:round_detail", args=[review_round.pk])
    assert review_round.groups.get().assignments.count() == 2
    empty = client.post(reverse("review:round_create"), {"name": "x", "reviewers_per_group": 2})
    assert empty.status_code == 200
    assert "Choose at least one lineage, campaign or problem set." in empty.content.decode()
