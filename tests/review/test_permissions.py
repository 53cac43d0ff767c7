"""Who may reach which review page and API operation (personas: admin, curator, reviewer A,
reviewer B, anonymous). Reviewer B is assigned the same group as A but may never see A's
assignment; curators and admins never use the reviewer pages."""

import json

import pytest
from django.urls import reverse

from review.models import Adjudication, Assignment, GroupItem, Tag

from .conftest import answers

pytestmark = pytest.mark.django_db

PAGE_ROLES = {"admin", "curator"}


def _a_and_b(personas):
    a = Assignment.objects.get(reviewer=personas.reviewer_a.user)
    b = Assignment.objects.get(reviewer=personas.reviewer_b.user)
    return a, b


def _expect_page(persona_name, response, allowed):
    if persona_name == "anonymous":
        assert response.status_code == 302 and "/login/" in response["Location"]
    elif allowed:
        assert response.status_code in (200, 302), response.status_code
    else:
        assert response.status_code in (403, 404), response.status_code


@pytest.mark.parametrize("name", ["admin", "curator", "reviewer_a", "reviewer_b", "anonymous"])
def test_curator_pages_are_for_curators_and_admins_only(personas, review_round, name):
    persona = personas.all()[name]
    allowed = name in PAGE_ROLES
    pk = review_round.pk
    for url in (
        reverse("review:round_list"),
        reverse("review:round_create"),
        reverse("review:round_detail", args=[pk]),
        reverse("review:round_export", args=[pk, "csv"]),
        reverse("review:round_export", args=[pk, "jsonl"]),
        reverse("review:tag_list"),
    ):
        _expect_page(name, persona.client.get(url), allowed)
    item = GroupItem.objects.filter(group__round=review_round).first()
    posts = [
        (reverse("review:round_status", args=[pk]), {"status": "open"}),
        (reverse("review:round_reassign", args=[pk]), {}),
        (
            reverse("review:score_override", args=[pk]),
            {"item": item.opaque_id, "dimension": "quality", "value": "4", "reason": "r"},
        ),
        (reverse("review:tag_list"), {"tag": Tag.objects.first().pk, "action": "noop"}),
    ]
    for url, data in posts:
        _expect_page(name, persona.client.post(url, data), allowed)


def test_adjudication_resolution_is_for_curators(personas, review_round):
    item = GroupItem.objects.filter(group__round=review_round).first()
    adj = Adjudication.objects.create(item=item, dimension="quality", detail="d")
    url = reverse("review:adjudication_resolve", args=[adj.pk])
    for name in ("reviewer_a", "reviewer_b"):
        assert personas.all()[name].client.post(url, {"resolution": "x"}).status_code == 403
    assert personas.anonymous.client.post(url, {"resolution": "x"}).status_code == 302
    assert personas.curator.client.post(url, {"resolution": "x"}).status_code == 302
    adj.refresh_from_db()
    assert adj.status == "resolved" and adj.resolved_by == personas.curator.user


@pytest.mark.parametrize("name", ["admin", "curator", "anonymous"])
def test_reviewer_pages_are_closed_to_non_reviewers(personas, review_round, name):
    persona = personas.all()[name]
    a, _ = _a_and_b(personas)
    for url in (
        reverse("review:queue"),
        reverse("review:group", args=[a.opaque_id]),
        reverse("review:tag_suggest") + "?q=dp",
    ):
        _expect_page(name, persona.client.get(url), allowed=False)
    response = persona.client.post(reverse("review:autosave", args=[a.opaque_id]), {})
    _expect_page(name, response, allowed=False)


def test_a_reviewer_reaches_only_their_own_assignment(personas, review_round):
    a, b = _a_and_b(personas)
    ca, cb = personas.reviewer_a.client, personas.reviewer_b.client
    assert ca.get(reverse("review:queue")).status_code == 200
    assert ca.get(reverse("review:group", args=[a.opaque_id])).status_code == 200
    assert cb.get(reverse("review:group", args=[b.opaque_id])).status_code == 200
    # B knows nothing of A's assignment: the same 404 as for a made-up id.
    stolen = cb.get(reverse("review:group", args=[a.opaque_id]))
    made_up = cb.get(reverse("review:group", args=["0123456789ab"]))
    assert stolen.status_code == made_up.status_code == 404
    item = a.reviews.first().item
    draft = answers(item.opaque_id, justification="B writing into A")
    assert cb.post(reverse("review:autosave", args=[a.opaque_id]), draft).status_code == 404
    assert cb.post(reverse("review:group", args=[a.opaque_id]), draft).status_code == 404
    assert not a.reviews.filter(justification="B writing into A").exists()


# --- API ---------------------------------------------------------------------------------------


def _api(persona, method, path, body=None):
    kwargs = {"content_type": "application/json"}
    if body is not None:
        kwargs["data"] = json.dumps(body)
    return getattr(persona.client, method)("/api" + path, **kwargs)


def _expect_api(name, response, allowed):
    if name == "anonymous":
        assert response.status_code == 401, (response.status_code, response.content)
    elif allowed:
        assert response.status_code in (200, 201), (response.status_code, response.content)
    else:
        assert response.status_code in (403, 404), (response.status_code, response.content)


@pytest.mark.parametrize("name", ["admin", "curator", "reviewer_a", "reviewer_b", "anonymous"])
def test_curator_api_operations_are_for_curators_and_admins(personas, review_round, name):
    persona = personas.all()[name]
    allowed = name in PAGE_ROLES
    pk = review_round.pk
    item = GroupItem.objects.filter(group__round=review_round).first()
    adj = Adjudication.objects.create(item=item, dimension="quality", detail="d")
    proposal = Tag.objects.create(name=f"proposal {name}", status="proposed")
    into = Tag.objects.get(name="greedy")
    calls = [
        ("get", "/review/rounds", None),
        ("get", f"/review/rounds/{pk}", None),
        ("get", f"/review/rounds/{pk}/progress", None),
        ("get", f"/review/rounds/{pk}/agreement", None),
        ("get", f"/review/rounds/{pk}/aggregates", None),
        ("get", f"/review/rounds/{pk}/adjudications", None),
        ("post", f"/review/adjudications/{adj.pk}/resolve", {"resolution": "ok"}),
        (
            "post",
            f"/review/rounds/{pk}/overrides",
            {"item": item.opaque_id, "dimension": "quality", "value": "4", "reason": "r"},
        ),
        ("get", "/review/tags", None),
        ("post", f"/review/tags/{proposal.pk}/merge", {"into": into.pk}),
        (
            "post",
            "/review/rounds",
            {
                "name": "api round",
                "root_public_ids": [review_round.problems[0].public_id],
                "reviewers": ["rae_reviewer"],
            },
        ),
    ]
    for method, path, body in calls:
        _expect_api(name, _api(persona, method, path, body), allowed)
    approve = Tag.objects.create(name=f"approve {name}", status="proposed")
    _expect_api(name, _api(persona, "post", f"/review/tags/{approve.pk}/approve"), allowed)


@pytest.mark.parametrize("name", ["admin", "curator", "anonymous"])
def test_reviewer_api_operations_are_closed_to_non_reviewers(personas, review_round, name):
    persona = personas.all()[name]
    a, _ = _a_and_b(personas)
    body = {"items": [], "certify_no_ai": False}
    for method, path, payload in (
        ("get", "/review/queue", None),
        ("get", f"/review/groups/{a.opaque_id}", None),
        ("put", f"/review/groups/{a.opaque_id}/draft", body),
        ("post", f"/review/groups/{a.opaque_id}/submit", body),
    ):
        _expect_api(name, _api(persona, method, path, payload), allowed=False)


def test_reviewer_api_serves_only_the_reviewers_own_group(personas, review_round):
    a, b = _a_and_b(personas)
    ra, rb = personas.reviewer_a, personas.reviewer_b
    assert _api(ra, "get", "/review/queue").json()[0]["opaque_id"] == a.opaque_id
    assert _api(ra, "get", f"/review/groups/{a.opaque_id}").status_code == 200
    assert _api(rb, "get", f"/review/groups/{a.opaque_id}").status_code == 404
    body = {"items": [{"opaque_id": a.reviews.first().item.opaque_id, "justification": "x"}]}
    assert _api(rb, "put", f"/review/groups/{a.opaque_id}/draft", body).status_code == 404
    assert _api(rb, "post", f"/review/groups/{a.opaque_id}/submit", body).status_code == 404
    assert _api(ra, "put", f"/review/groups/{a.opaque_id}/draft", body).json() == {
        "saved": 1,
        "draft_version": 1,
    }


def test_reviewer_api_submits_a_complete_group(personas, review_round):
    a, _ = _a_and_b(personas)
    items = []
    for review in a.reviews.select_related("item"):
        items.append(
            {
                "opaque_id": review.item.opaque_id,
                "clarity": 4,
                "novelty": 3,
                "difficulty": 5,
                "quality": 4,
                "validity": "valid",
                "cf_rating": 2400,
                "tags": ["HLD", "segment tree"],
                "justification": "Path queries need HLD.",
                "elapsed": 40,
            }
        )
    ra = personas.reviewer_a
    response = _api(ra, "post", f"/review/groups/{a.opaque_id}/submit", {"items": items})
    assert response.status_code == 400 and response.json()["certify_error"]
    response = _api(
        ra, "post", f"/review/groups/{a.opaque_id}/submit", {"items": items, "certify_no_ai": True}
    )
    assert response.status_code == 200, response.content
    assert response.json()["submitted"] is True
    a.refresh_from_db()
    assert a.submitted_at is not None
    # The same answers again are a success that changes nothing; other answers are refused.
    again = _api(
        ra, "post", f"/review/groups/{a.opaque_id}/submit", {"items": items, "certify_no_ai": True}
    )
    assert again.status_code == 200 and again.json()["submitted"] is True
    changed = [{**item, "clarity": 2} for item in items]
    assert (
        _api(
            ra,
            "post",
            f"/review/groups/{a.opaque_id}/submit",
            {"items": changed, "certify_no_ai": True},
        ).status_code
        == 409
    )
