import signal

import pytest

from benchapp import health
from tests.support.workers import kill_group, start_worker, wait_until_consuming


@pytest.fixture(autouse=True)
def fresh_worker_report():
    health.forget_workers()
    yield
    health.forget_workers()


@pytest.mark.django_db
def test_healthz_reports_ok_when_database_and_broker_answer(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["checks"] == {"database": "ok", "broker": "ok"}
    assert set(body["workers"]["queues"]) >= {"default", "sandbox"}


@pytest.mark.django_db
def test_healthz_names_the_broker_when_it_is_down(client, settings):
    # pytest-django's settings fixture restores the value; monkeypatch on that fixture used to
    # delete the setting for every later test of the session.
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
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


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_healthz_counts_the_real_workers_of_each_queue_and_names_an_idle_queue(client, settings):
    settings.HEALTHZ_WORKERS_CACHE_SECONDS = 0
    import redis

    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    body = client.get("/healthz").json()
    assert body["workers"]["queues"]["default"] == 0
    assert "no worker consumes queue 'default'" in body["warnings"]

    worker = start_worker("health", pool_args=("-c", "1", "-P", "solo"))
    try:
        wait_until_consuming()
        health.forget_workers()
        body = client.get("/healthz").json()
        assert client.get("/healthz").status_code == 200
        assert body["workers"]["queues"]["default"] == 1
        assert body["workers"]["queues"]["sandbox"] == 1
        assert [w.split("@")[0] for w in body["workers"]["workers"]["default"]] == ["health"]
        assert "warnings" not in body
    finally:
        kill_group(worker, signal.SIGTERM)


@pytest.mark.django_db
def test_the_worker_report_is_cached_and_refreshed_in_the_background(client, settings, monkeypatch):
    """Within the cache time the workers are not asked again; after it, the stale answer is
    served at once while one thread asks again."""
    settings.HEALTHZ_WORKERS_CACHE_SECONDS = 3600
    asked = []

    def inspect(timeout):
        asked.append(timeout)
        return {"queues": {"default": len(asked), "sandbox": 0}, "workers": {}, "error": ""}

    monkeypatch.setattr(health, "_inspect_workers", inspect)
    first = [client.get("/healthz").json()["workers"]["queues"]["default"] for _ in range(5)]
    assert first == [1, 1, 1, 1, 1] and len(asked) == 1

    settings.HEALTHZ_WORKERS_CACHE_SECONDS = 0
    stale = client.get("/healthz").json()["workers"]["queues"]["default"]
    assert stale == 1  # served at once, the refresh runs beside it
    thread = health._workers_state["thread"]
    if thread is not None:
        thread.join(5)
    assert len(asked) == 2
    assert health.workers_per_queue()["queues"]["default"] >= 2
