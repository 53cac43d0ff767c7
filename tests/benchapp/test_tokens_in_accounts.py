"""The API tokens are the accounts app's, at the bottom with the roles and grants: a bearer token
is found by ``accounts.roles`` directly (no lookup registered at start-up), in the table the
project has always kept them in."""

from __future__ import annotations

import pytest

from accounts import roles
from accounts.models import APIToken


def test_the_token_model_is_accounts_and_keeps_its_table():
    assert APIToken._meta.app_label == "accounts"
    assert APIToken._meta.db_table == "benchapp_apitoken"
    assert not hasattr(roles, "register_token_lookup")


@pytest.mark.django_db
def test_a_bearer_token_authenticates_a_script(personas, client):
    _, raw = APIToken.issue(user=personas.admin.user, name="script")
    url = "/api/endpoints"
    assert client.get(url).status_code == 401
    assert client.get(url, HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 200
    assert client.get(url, HTTP_AUTHORIZATION="Bearer bf_not-a-token").status_code == 401
