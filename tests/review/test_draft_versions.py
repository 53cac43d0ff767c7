"""Review drafts carry versions (issue #33): a save or submit based on an older version than
the server's stores nothing and answers what the server holds; a submit of the answers already
submitted is a success; the page's script gets JSON, a page without script gets pages."""

from __future__ import annotations

import pytest
from django.urls import reverse

from review import selectors, services
from review.models import Assignment, Review

from .conftest import answers

JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.fixture
def assignment(review_round, personas):
    return Assignment.objects.get(reviewer=personas.reviewer_a.user)


def _items(assignment) -> list[str]:
    return [r.item.opaque_id for r in assignment.reviews.select_related("item")]


def _all(assignment, version=None, certify=True, **overrides) -> dict[str, str]:
    data = {}
    for item in _items(assignment):
        data.update(answers(item, **overrides))
    if certify:
        data["certify_no_ai"] = "on"
    if version is not None:
        data["draft_version"] = str(version)
    return data


def test_a_save_based_on_an_older_version_stores_nothing_and_names_the_newer_answers(assignment):
    item = _items(assignment)[0]
    first = services.assignment_save_draft(
        assignment=assignment, data={f"{item}-justification": "From tab one.", "draft_version": "0"}
    )
    assert first.state.version == 1
    assert first.state.fields[f"{item}-justification"] == "From tab one."

    with pytest.raises(services.DraftConflict) as refused:
        services.assignment_save_draft(
            assignment=assignment,
            data={f"{item}-justification": "From a stale tab.", "draft_version": "0"},
        )
    assert refused.value.state.version == 1
    assert refused.value.state.fields[f"{item}-justification"] == "From tab one."
    assert Review.objects.get(assignment=assignment, item__opaque_id=item).justification == (
        "From tab one."
    )
    # An unreadable version is refused too, never applied.
    with pytest.raises(services.DraftConflict):
        services.assignment_save_draft(
            assignment=assignment, data={f"{item}-justification": "x", "draft_version": "abc"}
        )


def test_only_a_save_that_changes_the_answers_moves_the_version(assignment):
    item = _items(assignment)[0]
    data = {f"{item}-clarity": "4", f"{item}-elapsed": "5", "draft_version": "0"}
    assert services.assignment_save_draft(assignment=assignment, data=data).state.version == 1
    data["draft_version"] = "1"
    assert services.assignment_save_draft(assignment=assignment, data=data).state.version == 1
    # A save naming no version (the API, an older page) is applied as before.
    data.pop("draft_version")
    data[f"{item}-clarity"] = "5"
    assert services.assignment_save_draft(assignment=assignment, data=data).state.version == 2


def test_the_draft_state_names_every_input_of_the_form(assignment):
    state = selectors.reviewer_draft_state(assignment=assignment)
    item = _items(assignment)[0]
    assert state.version == 0 and not state.submitted
    assert {k for k in state.fields if k.startswith(item)} == {
        f"{item}-{n}" for n in selectors.CODING_DRAFT_FIELDS
    }
    assert state.fields["certify_no_ai"] == ""
    assert all(v == "" for v in state.fields.values())


def test_the_autosave_answers_the_page_in_json(assignment, personas):
    client = personas.reviewer_a.client
    url = reverse("review:autosave", args=[assignment.opaque_id])
    item = _items(assignment)[0]

    saved = client.post(url, {f"{item}-clarity": "3", "draft_version": "0"}, **JSON)
    assert saved.status_code == 200
    body = saved.json()
    assert body["state"] == "saved" and body["message"] == "Draft saved"
    assert body["version"] == 1 and body["fields"][f"{item}-clarity"] == "3"

    stale = client.post(url, {f"{item}-clarity": "5", "draft_version": "0"}, **JSON)
    assert stale.status_code == 409
    assert stale.json()["state"] == "conflict"
    assert stale.json()["version"] == 1 and stale.json()["fields"][f"{item}-clarity"] == "3"

    refused = client.post(url, {f"{item}-clarity": "9", "draft_version": "1"}, **JSON)
    assert refused.status_code == 422 and refused.json()["state"] == "refused"
    assert f"{item}-clarity" in refused.json()["message"]
    # The refused 9 is not stored (the rating is empty now): the page learns the new version.
    assert refused.json()["fields"][f"{item}-clarity"] == ""
    assert refused.json()["version"] == 2

    current = client.get(url)
    assert current.status_code == 200
    assert current.json()["state"] == "current" and current.json()["version"] == 2

    services.assignment_submit(assignment=assignment, data=_all(assignment))
    locked = client.post(url, {f"{item}-clarity": "2", "draft_version": "2"}, **JSON)
    assert locked.status_code == 409 and locked.json()["state"] == "submitted"
    assert "already submitted" in locked.json()["message"]


def test_a_submit_of_the_answers_already_submitted_moves_on(review_round, personas):
    """Two groups: a second plain post of the same submit opens the next group, as the first
    did, instead of an error on the submitted one."""
    from .factories import lineage_with_problems

    lineage, _ = lineage_with_problems(n_evolved=1, tag="second")
    services.round_create(
        name="second round",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user],
        lineages=[lineage],
    )
    client = personas.reviewer_a.client
    queue = sorted(
        Assignment.objects.filter(reviewer=personas.reviewer_a.user), key=lambda a: a.opaque_id
    )
    first, other = queue
    url = reverse("review:group", args=[first.opaque_id])
    data = _all(first, version=0)
    one = client.post(url, data)
    two = client.post(url, data, follow=True)
    assert one.status_code == 302 and one["Location"] == f"/review/g/{other.opaque_id}/"
    assert two.redirect_chain[-1][0] == f"/review/g/{other.opaque_id}/"
    text = two.content.decode()
    assert "Submitted. Next group" in text and "already submitted" not in text

    by_script = client.post(url, data, **JSON)
    assert by_script.status_code == 200
    assert by_script.json() == {"state": "submitted", "next": f"/review/g/{other.opaque_id}/"}
    changed = client.post(url, _all(first, version=0, clarity=1), **JSON)
    assert changed.status_code == 409 and changed.json()["state"] == "submitted"
    assert "differ" in changed.json()["message"]


def test_a_refused_submit_answers_the_script_with_labelled_errors(assignment, personas):
    client = personas.reviewer_a.client
    url = reverse("review:group", args=[assignment.opaque_id])
    item = _items(assignment)[0]
    data = _all(assignment, version=0, certify=False, cf_rating="")
    response = client.post(url, data, **JSON)
    assert response.status_code == 400
    body = response.json()
    assert body["state"] == "invalid" and "need attention" in body["message"]
    assert ["Codeforces rating estimate", "This field is required."] in body["errors"][item]
    assert body["certify_error"].startswith("Certify")
    assert body["version"] == 1  # the valid part was kept as a draft
    assignment.refresh_from_db()
    assert assignment.submitted_at is None


def test_a_stale_plain_submit_shows_both_answers_and_a_second_submit_keeps_mine(
    assignment, personas
):
    client = personas.reviewer_a.client
    url = reverse("review:group", args=[assignment.opaque_id])
    item = _items(assignment)[0]
    # Another tab saved a justification after this page was opened at version 0.
    services.assignment_save_draft(
        assignment=assignment,
        data={f"{item}-justification": "Saved by the other tab.", "draft_version": "0"},
    )
    data = _all(assignment, version=0, justification="Written on this page.")

    response = client.post(url, data)
    assert response.status_code == 409
    page = response.content.decode()
    assert "Changed in another tab or window" in page
    assert "Saved by the other tab." in page and "Written on this page." in page
    assert 'name="draft_version" value="1"' in page  # submitting again is the explicit choice
    assignment.refresh_from_db()
    assert assignment.submitted_at is None
    assert Review.objects.get(assignment=assignment, item__opaque_id=item).justification == (
        "Saved by the other tab."
    )

    as_script = client.post(url, data, **JSON)
    assert as_script.status_code == 409 and as_script.json()["state"] == "conflict"

    data["draft_version"] = "1"
    assert client.post(url, data).status_code == 302
    assert Review.objects.get(assignment=assignment, item__opaque_id=item).justification == (
        "Written on this page."
    )


def test_versions_a_page_saved_itself_are_no_conflict_for_it(assignment):
    """A page whose save landed but whose answer was lost (or that submits while its last save
    is on the way) sends its next form based on an older version: it made every newer one, so
    nothing is overwritten. Another page's save in between is a conflict again."""
    item = _items(assignment)[0]

    def save(text, based_on, writer):
        return services.assignment_save_draft(
            assignment=assignment,
            data={
                f"{item}-justification": text,
                "draft_version": str(based_on),
                "draft_writer": writer,
            },
        )

    assert save("first", 0, "page-one").state.version == 1
    assert save("first, then more", 0, "page-one").state.version == 2  # its answer was lost
    with pytest.raises(services.DraftConflict):
        save("from another page", 0, "page-two")
    assert save("page two, up to date", 2, "page-two").state.version == 3
    with pytest.raises(services.DraftConflict):
        save("page one again", 2, "page-one")
    # A submit from the page that saved last, based on the version before its own save.
    result = services.assignment_submit(
        assignment=assignment,
        data={**_all(assignment), "draft_version": "2", "draft_writer": "page-two"},
    )
    assert result.ok


def test_the_api_names_the_draft_version_and_refuses_an_older_one(assignment, personas, client):
    from accounts.models import APIToken

    _, raw = APIToken.issue(user=personas.reviewer_a.user, name="t")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}
    path = f"/api/review/groups/{assignment.opaque_id}"
    group = client.get(path, **auth).json()
    assert group["draft_version"] == 0
    item = group["problems"][0]["opaque_id"]

    def put(text, version):
        body = {"items": [{"opaque_id": item, "justification": text}], "draft_version": version}
        return client.put(f"{path}/draft", body, content_type="application/json", **auth)

    first = put("From the API.", 0)
    assert first.status_code == 200 and first.json()["draft_version"] == 1
    stale = put("From a stale client.", 0)
    assert stale.status_code == 409, stale.content
    assert Review.objects.get(assignment=assignment, item__opaque_id=item).justification == (
        "From the API."
    )
    assert client.get(path, **auth).json()["draft_version"] == 1


def test_a_plain_refused_submit_renders_the_new_version_so_the_fixed_submit_goes_through(
    assignment, personas
):
    client = personas.reviewer_a.client
    url = reverse("review:group", args=[assignment.opaque_id])
    refused = client.post(url, _all(assignment, version=0, certify=False))
    assert refused.status_code == 400
    assert 'name="draft_version" value="1"' in refused.content.decode()
    assert client.post(url, _all(assignment, version=1)).status_code == 302
    assignment.refresh_from_db()
    assert assignment.submitted_at is not None
