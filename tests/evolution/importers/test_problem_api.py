import json

import pytest

from accounts.models import APIToken
from evolution.models import Problem, ProblemSet
from tests.factories import ProblemFactory, ProblemSetFactory

pytestmark = pytest.mark.django_db

IMPORT_URL = "/api/problem-sets/import"


def _post(client, body, **headers):
    return client.post(IMPORT_URL, json.dumps(body), content_type="application/json", **headers)


def test_an_admin_imports_a_livecodebench_file_and_gets_the_counts(personas, lcb_sample_path):
    body = {"source": "lcb", "content": lcb_sample_path.read_text(), "set_name": "lcb-api"}
    first = _post(personas.admin.client, body)
    second = _post(personas.admin.client, body)

    assert first.status_code == 200, first.content
    assert first.json() == {
        "problem_set": "lcb-api",
        "created": 1,
        "updated": 0,
        "unchanged": 0,
        "problems_in_set": 1,
        # LiveCodeBench publishes no solutions.
        "with_reference": 0,
        "skipped": 0,
        "skipped_reasons": [],
        "references_kept": 0,
        "references_replaced": 0,
        "references_dropped": 0,
        "references_refused": 0,
        "references": [],
    }
    assert second.json()["unchanged"] == 1
    assert Problem.objects.count() == 1


def test_an_admin_imports_the_packaged_humaneval_without_content(personas):
    response = _post(personas.admin.client, {"source": "humaneval"})
    assert response.status_code == 200
    assert response.json()["created"] == 164


def test_an_admin_bearer_token_may_import(personas, lcb_sample_path):
    _, raw = APIToken.issue(user=personas.admin.user, name="script")
    from django.test import Client

    response = _post(
        Client(),
        {"source": "lcb", "content": lcb_sample_path.read_text()},
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert response.status_code == 200
    assert response.json()["problem_set"] == "livecodebench"


@pytest.mark.parametrize(
    "persona, status", [("curator", 403), ("reviewer_a", 403), ("anonymous", 401)]
)
def test_only_admins_may_import(personas, persona, status, lcb_sample_path):
    client = personas.all()[persona].client
    response = _post(client, {"source": "lcb", "content": lcb_sample_path.read_text()})
    assert response.status_code == status
    assert Problem.objects.count() == 0
    assert ProblemSet.objects.count() == 0


def test_a_reviewer_token_is_refused_too(personas, lcb_sample_path):
    from django.test import Client

    _, raw = APIToken.issue(user=personas.reviewer_a.user, name="script")
    response = _post(
        Client(),
        {"source": "humaneval"},
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert response.status_code == 403
    assert Problem.objects.count() == 0


def test_a_bad_line_returns_400_with_line_and_field_and_writes_nothing(personas, lcb_sample):
    broken = {k: v for k, v in lcb_sample.items() if k != "question_content"}
    content = json.dumps(lcb_sample) + "\n" + json.dumps({**broken, "question_id": "b"})
    response = _post(personas.admin.client, {"source": "lcb", "content": content})

    assert response.status_code == 400
    assert response.json() == {
        "detail": "line 2, field 'question_content': is missing",
        "line": 2,
        "field": "question_content",
    }
    assert Problem.objects.count() == 0


@pytest.mark.parametrize(
    "body, field",
    [
        ({"source": "csv", "content": "x"}, "source"),
        ({"source": "lcb"}, "content"),
        ({"source": "jsonl", "content": "{}", "set_name": "  "}, "set_name"),
    ],
)
def test_bad_requests_name_the_field(personas, body, field):
    response = _post(personas.admin.client, body)
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert response.json()["line"] is None


def test_admins_and_curators_list_sets_with_their_sizes(personas):
    ProblemSetFactory(name="b-set", source="lcb", problems=[ProblemFactory(), ProblemFactory()])
    ProblemSetFactory(name="a-set", source="humaneval")
    for persona in (personas.admin, personas.curator):
        response = persona.client.get("/api/problem-sets")
        assert response.status_code == 200
        assert [(s["name"], s["source"], s["problem_count"]) for s in response.json()] == [
            ("a-set", "humaneval", 0),
            ("b-set", "lcb", 2),
        ]


@pytest.mark.parametrize("persona, status", [("reviewer_b", 403), ("anonymous", 401)])
def test_reviewers_and_visitors_cannot_list_sets(personas, persona, status):
    ProblemSetFactory(name="secret-set")
    response = personas.all()[persona].client.get("/api/problem-sets")
    assert response.status_code == status
    assert "secret-set" not in response.content.decode()


def test_the_api_refuses_a_wrong_reference_keeps_references_and_replaces_them_when_asked(
    personas, lcb_sample
):
    from tests.evolution.benchevolver import lcb_world as w

    content = json.dumps(lcb_sample) + "\n" + w.acronym_line() + "\n"
    wrong = (
        json.dumps({"question_id": w.SHORT_SORT_ID, "solution": 'print("YES")\n'})
        + "\n"
        + json.dumps({"question_id": w.ACRONYM_ID, "solution": w.ACRONYM_OK})
    )
    first = _post(
        personas.admin.client, {"source": "lcb", "content": content, "solutions": wrong}
    ).json()
    assert (first["created"], first["with_reference"], first["references_refused"]) == (2, 1, 1)
    (refused,) = first["references"]
    assert refused["origin_id"] == w.SHORT_SORT_ID and refused["action"] == "refused"
    assert refused["test"] == "public test #0"
    assert refused["offered"] == {"source": "solutions-file", "file": "uploaded", "line": 1}
    assert "wrong answer" in refused["detail"]

    # Again without solutions: the accepted reference is kept.
    again = _post(personas.admin.client, {"source": "lcb", "content": content}).json()
    assert (again["unchanged"], again["with_reference"], again["references_kept"]) == (2, 1, 1)
    assert Problem.objects.get(origin_id=w.ACRONYM_ID).reference_solution == w.ACRONYM_OK

    # replace_references: the import's (no reference) wins, and the API names the problem.
    body = {"source": "lcb", "content": content, "replace_references": True}
    replaced = _post(personas.admin.client, body).json()
    assert (replaced["with_reference"], replaced["references_dropped"]) == (0, 1)
    (dropped,) = replaced["references"]
    assert (dropped["origin_id"], dropped["action"]) == (w.ACRONYM_ID, "dropped")
    assert dropped["previous"]["source"] == "solutions-file"
    assert Problem.objects.get(origin_id=w.ACRONYM_ID).reference_solution == ""
