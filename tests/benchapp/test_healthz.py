import pytest

from benchapp import health


@pytest.mark.django_db
def test_healthz_reports_ok_when_database_and_broker_answer(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "broker": "ok"}}


@pytest.mark.django_db
def test_healthz_names_the_broker_when_it_is_down(client, settings, monkeypatch):
    monkeypatch.setattr(settings, "CELERY_BROKER_URL", "redis://127.0.0.1:1/0")
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["broker"].startswith("unreachable")


def test_broker_probe_returns_false_for_closed_port(settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    ok, detail = health.broker_reachable()
    assert ok is False
    assert detail
