"""A review draft never answers "saved" while dropping a value: refused values are named."""

from __future__ import annotations

import pytest
from django.urls import reverse

from accounts.models import APIToken
from review.models import Assignment, Review

from .conftest import answers


@pytest.fixture
def setup(review_round, personas):
    assignment = Assignment.objects.get(reviewer=personas.reviewer_a.user)
    return assignment, assignment.reviews.first().item


def test_the_autosave_names_the_refused_value_instead_of_saying_saved(setup, personas):
    assignment, item = setup
    url = reverse("review:autosave", args=[assignment.opaque_id])
    data = answers(item.opaque_id, clarity="9")

    response = personas.reviewer_a.client.post(url, data, HTTP_HX_REQUEST="true")

    assert response.status_code == 422
    page = response.content.decode()
    assert "Draft saved" not in page
    assert "Not saved" in page and f"{item.opaque_id}-clarity" in page
    # What was valid is kept.
    assert Review.objects.get(assignment=assignment, item=item).novelty == 3


def test_an_empty_field_is_unfinished_not_refused(setup, personas):
    assignment, item = setup
    url = reverse("review:autosave", args=[assignment.opaque_id])
    response = personas.reviewer_a.client.post(url, answers(item.opaque_id, clarity=""))
    assert response.status_code == 200 and "Draft saved" in response.content.decode()


def test_the_api_draft_answers_422_with_each_refused_field(setup, personas, client):
    assignment, item = setup
    _, raw = APIToken.issue(user=personas.reviewer_a.user, name="t")
    payload = {"items": [{"opaque_id": item.opaque_id, "clarity": 9, "novelty": 3}]}
    response = client.put(
        f"/api/review/groups/{assignment.opaque_id}/draft",
        payload,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert response.status_code == 422, response.content
    body = response.json()
    assert f"{item.opaque_id}-clarity" in body["rejected"]
    assert body["saved"] == 1
