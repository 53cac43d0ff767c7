"""No secret leaves the server: an endpoint may only name allowed key variables and cassettes
inside the cassette roots; the API never reveals whether any other variable exists."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from accounts.models import APIToken
from evolution.llm import LLMClient, LLMError
from evolution.models import ModelEndpoint
from tests.factories import ModelEndpointFactory

MESSAGES = [{"role": "user", "content": "add two numbers"}]


def _bearer(user) -> dict:
    _, raw = APIToken.issue(user=user, name="script")
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


def test_it_refuses_to_save_an_endpoint_naming_the_servers_secret_key(db):
    endpoint = ModelEndpoint(
        name="exfil", base_url="http://127.0.0.1:9/v1", model="m", api_key_env="SECRET_KEY"
    )
    with pytest.raises(ValidationError) as caught:
        endpoint.full_clean()
    assert "api_key_env" in caught.value.message_dict


def test_it_refuses_secret_key_even_when_an_operator_allow_lists_it(db, settings):
    settings.LLM_KEY_ENV_ALLOW = ["SECRET_KEY", "OPENAI_API_KEY"]
    bad = ModelEndpoint(
        name="a", base_url="http://127.0.0.1:9/v1", model="m", api_key_env="SECRET_KEY"
    )
    good = ModelEndpoint(
        name="b", base_url="http://127.0.0.1:9/v1", model="m", api_key_env="OPENAI_API_KEY"
    )
    with pytest.raises(ValidationError):
        bad.full_clean()
    good.full_clean()


def test_the_worker_never_sends_a_disallowed_variable_even_from_an_old_row(
    endpoint, fake, monkeypatch
):
    monkeypatch.setenv("SECRET_KEY", "the-servers-own-secret")
    # Written behind validation, as a row from before the policy or raw SQL would be.
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(api_key_env="SECRET_KEY")
    endpoint.refresh_from_db()

    with pytest.raises(LLMError, match="outside the allowed"):
        LLMClient(endpoint).chat(MESSAGES, role="solver")
    assert fake.request_count == 0


def test_the_api_refuses_a_disallowed_key_variable_with_the_field_named(personas, client):
    response = client.post(
        "/api/endpoints",
        {
            "name": "exfil",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "m",
            "api_key_env": "DATABASE_URL",
        },
        content_type="application/json",
        **_bearer(personas.admin.user),
    )
    assert response.status_code == 400
    assert "api_key_env" in response.json()["errors"]
    assert not ModelEndpoint.objects.filter(name="exfil").exists()


def test_the_api_is_no_oracle_for_variables_outside_the_policy(personas, client, monkeypatch):
    monkeypatch.setenv("BENCHFORGE_KEY_SET", "sk-1")
    monkeypatch.delenv("BENCHFORGE_KEY_UNSET", raising=False)
    ModelEndpointFactory(name="allowed-set", api_key_env="BENCHFORGE_KEY_SET")
    ModelEndpointFactory(name="allowed-unset", api_key_env="BENCHFORGE_KEY_UNSET")
    # DATABASE_URL is set in every test run; PATH is set everywhere.
    for name in ("DATABASE_URL", "PATH"):
        ModelEndpoint.objects.create(
            name=f"old-{name}", base_url="http://127.0.0.1:9/v1", model="m", api_key_env=name
        )

    rows = {
        row["name"]: row["api_key_set"]
        for row in client.get("/api/endpoints", **_bearer(personas.admin.user)).json()
    }
    assert rows["allowed-set"] is True and rows["allowed-unset"] is False
    assert rows["old-DATABASE_URL"] is False and rows["old-PATH"] is False


@pytest.mark.parametrize(
    "cassette",
    [
        "../../../etc/passwd",
        "/etc/passwd",
        "../outside.jsonl",
        "/tmp/x.jsonl",
        "demo.txt",
        "a\x00.jsonl",
    ],
)
def test_it_refuses_a_cassette_outside_the_cassette_dir(db, settings, tmp_path, cassette):
    settings.LLM_CASSETTE_DIR = tmp_path / "cassettes"
    endpoint = ModelEndpoint(name="r", provider="replay", model="m", cassette=cassette)
    with pytest.raises(ValidationError) as caught:
        endpoint.full_clean()
    assert "cassette" in caught.value.message_dict


def test_a_symlink_cannot_lead_a_cassette_out_of_its_dir(db, settings, tmp_path):
    root = tmp_path / "cassettes"
    root.mkdir()
    outside = tmp_path / "secret.jsonl"
    outside.write_text("{}\n")
    (root / "link.jsonl").symlink_to(outside)
    settings.LLM_CASSETTE_DIR = root
    endpoint = ModelEndpoint(name="r", provider="replay", model="m", cassette="link.jsonl")
    with pytest.raises(ValidationError):
        endpoint.full_clean()


def test_the_bundled_demo_cassettes_are_accepted(db):
    for cassette in ("demo.jsonl",):
        ModelEndpoint(name="r", provider="replay", model="m", cassette=cassette).full_clean()
    from reasoning.demo import pack as reasoning_pack
    from xcoder.demo import pack as xcoder_pack

    for path in (reasoning_pack.CASSETTE, xcoder_pack.CASSETTE):
        ModelEndpoint(name="r", provider="replay", model="m", cassette=str(path)).full_clean()
