"""Everything a curator does on a page can be scripted: a benchmark and a release draft are
made through the API (issue: pages only, session + CSRF), then gated, frozen and published
with the operations that existed."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from accounts.models import APIToken
from accounts.roles import CURATOR, REVIEWER
from releases.models import Benchmark, Release
from tests.factories import ProblemSetFactory, UserFactory

pytestmark = pytest.mark.django_db


def _client(role: str) -> Client:
    user = UserFactory()
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    _, raw = APIToken.issue(user=user, name="script")
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def test_a_curator_makes_a_benchmark_and_a_release_draft_through_the_api():
    client = _client(CURATOR)
    made = client.post(
        "/api/benchmarks",
        {"name": "Scripted Bench", "description": "from a script"},
        content_type="application/json",
    )
    assert made.status_code == 201, made.content
    assert made.json()["slug"] == "scripted-bench"
    seeds = ProblemSetFactory()
    draft = client.post(
        "/api/releases",
        {"benchmark": "scripted-bench", "version": "1.0.0", "problem_set_ids": [seeds.pk]},
        content_type="application/json",
    )
    assert draft.status_code == 201, draft.content
    release = Release.objects.get(pk=draft.json()["id"])
    assert (release.state, release.version) == ("draft", "1.0.0")
    assert list(release.problem_sets.all()) == [seeds]

    again = client.post(
        "/api/benchmarks", {"name": "Scripted Bench"}, content_type="application/json"
    )
    assert again.status_code == 400 and "exists" in again.json()["detail"]
    unknown = client.post(
        "/api/releases",
        {"benchmark": "scripted-bench", "version": "1.1.0", "campaign_ids": [999999]},
        content_type="application/json",
    )
    assert unknown.status_code == 400 and "campaign_ids" in unknown.json()["detail"]


def test_other_roles_are_refused():
    response = _client(REVIEWER).post(
        "/api/benchmarks", {"name": "Nope"}, content_type="application/json"
    )
    assert response.status_code in (401, 403)
    assert not Benchmark.objects.filter(name="Nope").exists()
