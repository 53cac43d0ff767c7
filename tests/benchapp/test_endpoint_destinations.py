"""Endpoint URLs are policy-checked where they are written (the API, the admin pages) and
*Test connection* shows a status and a classified reason, never the reply's body (issue #34,
finding 3). No refusal here reaches the network: the addresses refused are decided from the
URL alone, and ``connections`` refuses (and records) any connection past loopback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse

from accounts.models import APIToken
from evolution.models import LLMCall, ModelEndpoint
from tests.factories import ModelEndpointFactory
from tests.support.fake_openai import FakeOpenAI, Fault
from tests.support.network import loopback_only

ROOT = Path(__file__).resolve().parents[2]
SECRET = "SECRET-BODY-7f3a"

REFUSED = [
    # Redis, PostgreSQL and the instance metadata service, as the finding names them.
    ("http://10.0.0.5:6379/v1", "10.0.0.5 is a private (non-public) address"),
    ("http://192.168.1.20:5432/v1", "private"),
    ("http://169.254.169.254/latest/meta-data/", "link-local or cloud metadata"),
    ("http://[fe80::1]:8000/v1", "link-local"),
    ("http://[::ffff:172.17.0.1]:8000/v1", "172.17.0.1 is a private"),
    ("ftp://8.8.8.8/v1", "http:// or https://"),
    ("http://8.8.8.8/v1?", "query string"),
    ("http://8.8.8.8/admin?x=/v1", "query string"),
    ("http://8.8.8.8/v1#x", "fragment"),
    ("http://admin:pw@8.8.8.8/v1", "user or password"),
]


@pytest.fixture
def connections(monkeypatch):
    """Every address a socket tried to connect to that is not loopback (refused here)."""
    return loopback_only(monkeypatch)


def _token(personas) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {APIToken.issue(user=personas.admin.user, name='t')[1]}"}


def _endpoint_json(base_url: str, name: str = "e") -> dict:
    return {"name": name, "provider": "openai", "base_url": base_url, "model": "m"}


@pytest.mark.django_db
@pytest.mark.parametrize(("url", "why"), REFUSED)
def test_the_api_refuses_an_endpoint_url_outside_the_policy(personas, connections, url, why):
    response = personas.admin.client.post(
        "/api/endpoints", _endpoint_json(url), content_type="application/json", **_token(personas)
    )
    assert response.status_code == 400, response.content
    assert why in " ".join(response.json()["errors"]["base_url"])
    assert not ModelEndpoint.objects.exists()
    assert connections == []


@pytest.mark.django_db
def test_loopback_is_accepted_only_while_the_setting_allows_it(personas, settings):
    headers = _token(personas)
    url = "http://127.0.0.1:8001/v1"
    # The suite allows loopback explicitly (tests/conftest.py), as `make demo` does.
    made = personas.admin.client.post(
        "/api/endpoints", _endpoint_json(url), content_type="application/json", **headers
    )
    assert made.status_code == 201, made.content
    settings.ENDPOINT_ALLOWED_PRIVATE_NETWORKS = []
    refused = personas.admin.client.post(
        "/api/endpoints", _endpoint_json(url, "e2"), content_type="application/json", **headers
    )
    assert refused.status_code == 400
    assert "127.0.0.1 is a loopback address" in refused.json()["errors"]["base_url"][0]
    public = personas.admin.client.post(
        "/api/endpoints",
        _endpoint_json("https://8.8.8.8/v1", "e3"),
        content_type="application/json",
        **headers,
    )
    assert public.status_code == 201, public.content


@pytest.mark.django_db
def test_the_admin_page_refuses_it_too(personas, connections):
    form = {
        "name": "metadata",
        "provider": "openai",
        "base_url": "http://169.254.169.254/latest/",
        "model": "m",
        "api_key_env": "",
        "extra_params": "{}",
        "concurrency_limit": 4,
        "timeout_s": 30,
        "max_retries": 2,
        "price_in_per_1k": 0,
        "price_out_per_1k": 0,
    }
    page = personas.admin.client.post(reverse("staff:endpoint_new"), form)
    assert page.status_code == 200
    assert "link-local or cloud metadata" in page.content.decode()
    assert not ModelEndpoint.objects.exists()
    assert connections == []


def _test_connection(personas, endpoint) -> str:
    response = personas.admin.client.post(
        reverse("staff:endpoint_test", args=[endpoint.pk]), HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    return response.content.decode()


def _errors_table(personas, endpoint) -> str:
    return personas.admin.client.get(
        reverse("staff:endpoint_errors", args=[endpoint.pk])
    ).content.decode()


@pytest.mark.django_db(transaction=True)
def test_test_connection_refuses_a_destination_outside_the_policy_without_connecting(
    personas, connections
):
    endpoint = ModelEndpointFactory(base_url="http://169.254.169.254/latest")  # a raw row
    html = _test_connection(personas, endpoint)
    assert 'data-ok="false"' in html
    assert "refused by the endpoint URL policy" in html and "link-local" in html
    assert html.count("endpoint URL policy") == 1  # said once, not wrapped in itself
    assert connections == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            Fault.http_status(401, f'{{"error": "{SECRET}"}}'),
            "HTTP 401: the provider refused the key",
        ),
        (Fault.http_status(403, SECRET), "HTTP 403: the provider refused access"),
        (Fault.http_status(404, f"<html>{SECRET}</html>"), "HTTP 404: nothing answers"),
        (Fault.http_status(302, SECRET), "HTTP 302: the endpoint redirects elsewhere"),
        (Fault.server_error(503), "HTTP 503: the provider failed"),
        (Fault.malformed_json(), "not an OpenAI-compatible reply"),
        (Fault.missing_content(), "not an OpenAI-compatible reply"),
    ],
)
def test_test_connection_shows_a_status_and_a_classified_reason_never_the_body(
    personas, answer, reason
):
    with FakeOpenAI() as server:
        server.responder = lambda body, headers: answer
        endpoint = ModelEndpointFactory(base_url=server.base_url)
        html = _test_connection(personas, endpoint)
    assert 'data-ok="false"' in html and reason in html, html
    assert SECRET not in html
    assert SECRET not in _errors_table(personas, endpoint)


@pytest.mark.django_db(transaction=True)
def test_test_connection_names_a_refused_connection_and_a_time_out(personas):
    closed = ModelEndpointFactory(base_url="http://127.0.0.1:9/v1")
    assert "connection refused" in _test_connection(personas, closed)
    with FakeOpenAI() as server:
        server.responder = lambda body, headers: Fault.timeout(5)
        slow = ModelEndpointFactory(base_url=server.base_url, timeout_s=1)
        assert "timed out" in _test_connection(personas, slow)


@pytest.mark.django_db(transaction=True)
def test_a_working_endpoint_connects_without_its_answer_on_the_page(personas):
    with FakeOpenAI() as server:
        server.responder = lambda body, headers: f"ready {SECRET}"
        endpoint = ModelEndpointFactory(base_url=server.base_url)
        html = _test_connection(personas, endpoint)
    assert 'data-ok="true"' in html and "an OpenAI-compatible reply" in html
    assert SECRET not in html
    (call,) = LLMCall.objects.filter(endpoint=endpoint)
    assert call.status == "ok"


def _settings_of(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings; "
            "print(' '.join(map(str, settings.ENDPOINT_ALLOWED_PRIVATE_NETWORKS)))",
        ],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "benchapp.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_setting_is_read_from_the_environment():
    empty = _settings_of({"ENDPOINT_ALLOWED_PRIVATE_NETWORKS": ""})
    assert empty.returncode == 0 and empty.stdout.strip() == "", empty.stderr
    listed = _settings_of({"ENDPOINT_ALLOWED_PRIVATE_NETWORKS": "127.0.0.0/8, 10.1.2.3"})
    assert listed.stdout.split() == ["127.0.0.0/8", "10.1.2.3/32"], listed.stderr
    bad = _settings_of({"ENDPOINT_ALLOWED_PRIVATE_NETWORKS": "10.0.0.0/8,intranet"})
    assert bad.returncode != 0
    assert "ENDPOINT_ALLOWED_PRIVATE_NETWORKS must list IP networks" in bad.stderr
