"""`GET /api/releases`: published releases for everyone, drafts and frozen ones too for
curators and admins, whether they sign in or send their API token (issue: an admin's token got
`[]`, the docstring's promise notwithstanding)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from accounts.models import APIToken
from accounts.roles import ADMIN, CURATOR
from releases import services
from tests.factories import UserFactory
from tests.support.gate_rules import SELECTION_TIME_OK

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("role", [ADMIN, CURATOR])
def test_a_curator_s_token_lists_the_drafts_too(role):
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="Drafty")
    draft = services.release_create(benchmark=bench, campaigns=[], notes="work in progress")
    user = UserFactory()
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    _, raw = APIToken.issue(user=user, name="script")

    anonymous = Client().get("/api/releases").json()
    assert draft.pk not in [r["id"] for r in anonymous]
    with_token = Client().get("/api/releases", HTTP_AUTHORIZATION=f"Bearer {raw}").json()
    assert draft.pk in [r["id"] for r in with_token]
    wrong = Client().get("/api/releases", HTTP_AUTHORIZATION="Bearer bf_not-a-token").json()
    assert draft.pk not in [r["id"] for r in wrong]
