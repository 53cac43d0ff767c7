"""What the operations endpoints tell whom.

``/healthz`` answers anyone with its status and HTTP code only (what a load balancer and the
compose health check read); the checks, worker host names and queues are for admins (signed
in, or an admin's API token). The OpenAPI schema and its docs page are for admins and curators
(signed in or with their API token), not for anonymous visitors or reviewers.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from accounts.models import APIToken
from benchapp import health

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_report():
    health.forget_workers()
    yield
    health.forget_workers()


def _fake_workers(monkeypatch):
    report = {
        "queues": {"default": 1, "sandbox": 0},
        "workers": {"default": ["models@worker-host-SECRET"], "sandbox": []},
        "error": "",
    }
    monkeypatch.setattr(health, "_inspect_workers", lambda timeout: report)


def test_an_anonymous_probe_gets_the_status_and_nothing_else(monkeypatch):
    _fake_workers(monkeypatch)
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    body = response.content.decode()
    for detail in ("worker-host-SECRET", "sandbox", "default", "database", "broker", "queue"):
        assert detail not in body, detail


def test_an_anonymous_probe_of_an_unhealthy_server_gets_503_and_the_status(settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    response = Client().get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"status": "unhealthy"}


def test_admins_get_the_details_signed_in_or_with_their_token(personas, monkeypatch):
    _fake_workers(monkeypatch)
    full = personas.admin.client.get("/healthz")
    assert full.status_code == 200
    body = full.json()
    assert body["checks"] == {"database": "ok", "broker": "ok"}
    assert body["workers"]["workers"]["default"] == ["models@worker-host-SECRET"]
    assert "no worker consumes queue 'sandbox'" in body["warnings"]
    _, raw = APIToken.issue(user=personas.admin.user, name="monitor")
    by_token = Client().get("/healthz", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert by_token.json() == body
    # Curators, reviewers and a wrong token get the status only.
    for client in (personas.curator.client, personas.reviewer_a.client):
        assert client.get("/healthz").json() == {"status": "ok"}
    wrong = Client().get("/healthz", HTTP_AUTHORIZATION="Bearer bf_not-a-token")
    assert wrong.status_code == 200 and wrong.json() == {"status": "ok"}


def test_the_compose_health_check_still_passes():
    """docker-compose.yml's web check: the status code of an anonymous GET with Host
    localhost; tests/deploy reads ``status``."""
    response = Client().get("/healthz", HTTP_HOST="localhost")
    assert response.status_code == 200 and response.json()["status"] == "ok"


@pytest.mark.parametrize("url", ["/api/openapi.json", "/api/docs"])
def test_the_openapi_schema_is_not_open_to_anyone(url, personas):
    anonymous = Client().get(url)
    assert b"/api/releases" not in anonymous.content
    if url.endswith(".json"):
        assert anonymous.status_code == 401
    else:  # the docs page sends a browser to the login page
        assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    reviewer = personas.reviewer_a.client.get(url)
    assert reviewer.status_code == 403
    assert b"/api/releases" not in reviewer.content


def test_admins_and_curators_read_the_schema_signed_in_or_with_their_token(personas):
    for persona in (personas.admin, personas.curator):
        response = persona.client.get("/api/openapi.json")
        assert response.status_code == 200
        assert "/api/releases" in json.loads(response.content)["paths"]
        assert persona.client.get("/api/docs").status_code == 200
    _, raw = APIToken.issue(user=personas.curator.user, name="script")
    by_token = Client().get("/api/openapi.json", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert by_token.status_code == 200 and "paths" in by_token.json()
    _, reviewer_raw = APIToken.issue(user=personas.reviewer_a.user, name="script")
    refused = Client().get("/api/openapi.json", HTTP_AUTHORIZATION=f"Bearer {reviewer_raw}")
    assert refused.status_code == 403
