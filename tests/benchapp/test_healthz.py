import json
import signal
import threading
import time

import pytest

from benchapp import health, views
from tests.support.workers import kill_group, start_worker, wait_until_consuming


@pytest.fixture(autouse=True)
def fresh_worker_report():
    health.forget_workers()
    yield
    health.forget_workers()


@pytest.mark.django_db
def test_healthz_reports_ok_when_database_and_broker_answer(admin_client):
    # The details are for admins (tests/benchapp/test_closed_endpoints.py: anyone else gets the
    # status only).
    response = admin_client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["checks"] == {"database": "ok", "broker": "ok"}
    assert set(body["workers"]["queues"]) >= {"default", "sandbox"}


@pytest.mark.django_db
def test_healthz_names_the_broker_when_it_is_down(admin_client, settings):
    # pytest-django's settings fixture restores the value; monkeypatch on that fixture used to
    # delete the setting for every later test of the session.
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    response = admin_client.get("/healthz")
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
def test_healthz_counts_the_real_workers_of_each_queue_and_names_an_idle_queue(
    admin_client, settings
):
    client = admin_client
    settings.HEALTHZ_WORKERS_CACHE_SECONDS = 0
    settings.HEALTHZ_REPORT_SECONDS = 0
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
def test_the_worker_report_is_cached_and_refreshed_in_the_background(
    admin_client, settings, monkeypatch
):
    """Within the cache time the workers are not asked again; after it, the stale answer is
    served at once while one thread asks again."""
    client = admin_client
    settings.HEALTHZ_WORKERS_CACHE_SECONDS = 3600
    settings.HEALTHZ_REPORT_SECONDS = 0  # every request checks again: the workers' cache is tested
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


@pytest.mark.django_db
def test_the_probe_answers_from_its_report_and_checks_again_once_it_expires(
    client, admin_client, settings, monkeypatch
):
    """Within HEALTHZ_REPORT_SECONDS the probe does no check at all (no database, no broker);
    the first request after the report expired is still answered from it while a background
    thread checks again, and a broker that went down shows from then on."""
    settings.HEALTHZ_REPORT_SECONDS = 3600
    broker_asked = []
    real = health.broker_reachable

    def counted():
        broker_asked.append(1)
        return real()

    monkeypatch.setattr(views, "broker_reachable", counted)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    assert client.get("/healthz").status_code == 200
    with CaptureQueriesContext(connection) as queries:
        statuses = [client.get("/healthz").status_code for _ in range(20)]
    assert statuses == [200] * 20 and len(queries) == 0 and len(broker_asked) == 1

    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    assert client.get("/healthz").status_code == 200  # the report is still fresh
    settings.HEALTHZ_REPORT_SECONDS = 0.05
    time.sleep(0.1)
    # Expired: served at once while one thread checks again beside it.
    assert client.get("/healthz").status_code == 200
    thread = health._report_state["thread"]
    assert thread is not None
    thread.join(10)
    response = client.get("/healthz")
    assert response.status_code == 503 and len(broker_asked) == 2
    assert response.json() == {"status": "unhealthy"}  # an anonymous probe: the status only
    assert admin_client.get("/healthz").json()["checks"]["broker"].startswith("unreachable")


def test_a_check_that_hangs_turns_the_probe_unhealthy_after_the_stale_limit(settings):
    """While one request's check hangs (a database that accepts and never answers), the others
    get the last report at once, until it is HEALTHZ_STALE_SECONDS old: then 503, saying how
    long the checks have run."""
    settings.HEALTHZ_REPORT_SECONDS = 0
    settings.HEALTHZ_STALE_SECONDS = 1
    assert health.cached_report(lambda: (200, {"status": "ok"}))[0] == 200

    release = threading.Event()
    entered = threading.Event()

    def hanging():
        entered.set()
        release.wait(10)
        return 200, {"status": "ok"}

    hung = threading.Thread(target=health.cached_report, args=(hanging,))
    hung.start()
    try:
        assert entered.wait(5)
        never = lambda: pytest.fail("a second check must not start while one runs")  # noqa: E731
        status, body = health.cached_report(never)
        assert (status, json.loads(body)) == (200, {"status": "ok"})  # the last report, at once
        time.sleep(1.1)
        status, body = health.cached_report(never)
        assert status == 503
        assert json.loads(body)["checks"]["report"].startswith("the checks have not finished")
    finally:
        release.set()
        hung.join(5)
    assert health.cached_report(lambda: (200, {"status": "ok"}))[0] == 200


def test_before_the_first_answer_a_concurrent_probe_waits_for_it(settings):
    """A process's first check is in flight: a second probe waits for its answer instead of
    answering 503 (a freshly started web process is not unhealthy)."""
    settings.HEALTHZ_STALE_SECONDS = 10
    entered, release, answers = threading.Event(), threading.Event(), []

    def slow():
        entered.set()
        release.wait(10)
        return 200, {"status": "ok"}

    first = threading.Thread(target=lambda: answers.append(health.cached_report(slow)))
    first.start()
    assert entered.wait(5)
    second = threading.Thread(
        target=lambda: answers.append(health.cached_report(lambda: pytest.fail("checked twice")))
    )
    second.start()
    time.sleep(0.2)
    assert answers == []  # still waiting
    release.set()
    first.join(5)
    second.join(5)
    assert [status for status, _ in answers] == [200, 200]


def test_after_an_idle_spell_simultaneous_probes_all_get_the_last_report(settings):
    """The report is older than HEALTHZ_STALE_SECONDS after an idle spell; the first probe
    starts a check in the background, and the probes that arrive while it runs got 503 "the
    checks have not finished for 0.0 s" (21 of 24 seen on a healthy server): stale means a
    check that has run too long, not an old report."""
    settings.HEALTHZ_REPORT_SECONDS = 2
    settings.HEALTHZ_STALE_SECONDS = 10
    assert health.cached_report(lambda: (200, {"status": "ok"}))[0] == 200
    with health._report_lock:  # the last report is a minute old: the web process was idle
        health._report_state["at"] -= 60

    def slow():
        time.sleep(0.5)
        return 200, {"status": "ok"}

    start = threading.Barrier(24)
    answers = []

    def probe():
        start.wait(5)
        answers.append(health.cached_report(slow)[0])

    probes = [threading.Thread(target=probe) for _ in range(24)]
    for thread in probes:
        thread.start()
    for thread in probes:
        thread.join(10)
    assert answers == [200] * 24


def test_a_worker_too_busy_to_answer_in_time_is_counted_by_its_heartbeat(monkeypatch):
    """(issue: under load /healthz counted 0 workers on a queue that had one: the worker did
    not answer the broadcast within its time-out.) A fresh heartbeat record counts it; a stale
    or stopped one does not."""
    import time

    from evolution import workers

    monkeypatch.setattr(workers, "broadcast", lambda **kwargs: {})
    now = time.time()
    records = {
        "celery@busy": {"heartbeat": now - 1, "stopped": None},
        "celery@gone": {"heartbeat": now - workers.STALE_AFTER_SECONDS - 30, "stopped": None},
        "celery@stopped": {"heartbeat": now - 1, "stopped": now - 1},
    }
    try:
        for host, fields in records.items():
            workers.store.write({"hostname": host, "queues": ["sandbox"], **fields})
        report = health._inspect_workers(0.1)
    finally:
        for host in records:
            workers.store.forget(host)
    assert report["workers"]["sandbox"] == ["celery@busy"]
    assert report["queues"]["sandbox"] == 1
