"""evolution.workers against real Celery workers on the test Redis: who answers, which queues
they serve, their heartbeats and throughput, queue depths, and what becomes of a worker that
is stopped (SIGTERM) or killed (SIGKILL). /healthz and the campaign page report a launched
campaign that no live worker serves."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
import redis
from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.urls import reverse

from benchapp import health as healthz_report
from evolution import workers
from evolution.models.campaigns import CampaignState
from tests.factories import CampaignFactory
from tests.support.workers import kill_group, start_worker, wait_for, worker_env

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _status(prefix: str) -> str | None:
    for worker in workers.overview(refresh=True)["workers"]:
        if worker["hostname"].startswith(prefix):
            return worker["status"]
    return None


def _host(prefix: str) -> str:
    live = workers.live_workers(refresh=True) or {}
    return next((h for h in live if h.startswith(prefix)), "")


def test_workers_their_queues_heartbeats_and_how_they_go(personas):
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    cache.clear()
    healthz_report.forget_workers()  # /healthz answers from a report up to 15 s old
    campaign = CampaignFactory(state=CampaignState.RUNNING, kind="benchevolver")
    # No worker at all: the launched campaign is reported, by /healthz and on its page.
    assert workers.workers_by_queue(refresh=True) == {"default": [], "sandbox": []}
    health = personas.admin.client.get("/healthz")
    assert health.status_code == 200, health.content
    assert health.json()["campaigns_without_worker"] == [
        {
            "id": campaign.pk,
            "name": campaign.name,
            "kind": "benchevolver",
            "queues": ["default", "sandbox"],
        }
    ]
    page = personas.curator.client.get(reverse("evolution:campaign_detail", args=[campaign.pk]))
    assert "No live worker for the queues default and sandbox." in page.content.decode()

    # Three messages for a queue nobody consumes: the depth counts them.
    for _ in range(3):
        current_app.signature("benchapp.tasks.seed_import_run", args=(0,)).apply_async(
            queue="depth-probe"
        )
    assert workers.queue_depths(["depth-probe", "never-used"]) == {
        "depth-probe": 3,
        "never-used": 0,
    }

    alpha = start_worker("alpha")
    beta = start_worker("beta")
    try:
        wait_for(lambda: _host("alpha@") and _host("beta@"), 120, "both workers answering")
        by_queue = workers.workers_by_queue(refresh=True)
        assert [h.split("@")[0] for h in by_queue["default"]] == ["alpha", "beta"]
        assert [h.split("@")[0] for h in by_queue["sandbox"]] == ["alpha", "beta"]
        # (The workers took the first campaign over as they started: it had no work left.)
        # A campaign launched now, with both workers live, is not reported.
        served = CampaignFactory(state=CampaignState.RUNNING, kind="benchevolver")
        healthz_report.forget_workers()
        assert "campaigns_without_worker" not in personas.admin.client.get("/healthz").json()
        served_page = reverse("evolution:campaign_detail", args=[served.pk])
        assert "No live worker" not in personas.curator.client.get(served_page).content.decode()

        # Heartbeats: recorded by each worker every 2 s with its queues and counts.
        wait_for(
            lambda: len([r for r in workers.store.read() if r["hostname"].startswith("alpha@")]),
            30,
            "alpha's heartbeat",
        )
        first = next(r for r in workers.store.read() if r["hostname"].startswith("alpha@"))
        assert first["queues"] == ["default", "sandbox"] and first["stopped"] is None
        time.sleep(2.5)
        later = next(r for r in workers.store.read() if r["hostname"].startswith("alpha@"))
        assert later["heartbeat"] > first["heartbeat"]

        # Throughput: four tasks (imports of a job that does not exist: they do nothing) are
        # counted by the worker that ran them, in its heartbeat and in its stats().
        for _ in range(4):
            current_app.signature("benchapp.tasks.seed_import_run", args=(0,)).apply_async(
                queue="default"
            )

        def processed() -> int:
            return sum(r["processed"] for r in workers.store.read() if r["stopped"] is None)

        wait_for(lambda: processed() >= 4, 60, "four tasks counted in the heartbeats")
        wait_for(
            lambda: any((r["per_minute"] or 0) > 0 for r in workers.store.read()),
            30,
            "a rate over the last minute",
        )
        overview = workers.overview(refresh=True)
        rows = {w["hostname"].split("@")[0]: w for w in overview["workers"]}
        ran = sum(w["by_task"].get("benchapp.tasks.seed_import_run", 0) for w in rows.values())
        assert ran == 4
        assert rows["alpha"]["status"] == rows["beta"]["status"] == "live"
        assert rows["alpha"]["concurrency"] == 2  # from the worker's own stats()
        assert rows["alpha"]["heartbeat_age"] < workers.STALE_AFTER_SECONDS
        queues = {q["name"]: q for q in overview["queues"]}
        assert len(queues["default"]["workers"]) == 2 and queues["default"]["depth"] == 0

        kill_group(alpha, signal.SIGTERM)  # stopped cleanly: says so at once
        kill_group(beta, signal.SIGKILL)  # killed: silent, found gone by its heartbeat
        assert wait_for(lambda: _status("alpha@") == "stopped", 30, "alpha stopped")
        assert wait_for(lambda: _status("beta@") == "gone", 60, "beta gone")
        assert workers.workers_by_queue(refresh=True) == {"default": [], "sandbox": []}
        html = personas.admin.client.get(reverse("staff:workers") + "?refresh=1").content
        assert b'data-status="stopped"' in html and b'data-status="gone"' in html
        assert b"Launched campaigns that no live worker serves" in html
        assert served.name.encode() in html
        assert "No live worker for the queues default and sandbox." in (
            personas.curator.client.get(served_page).content.decode()
        )
    finally:
        kill_group(alpha)
        kill_group(beta)
        redis.Redis.from_url(settings.REDIS_URL).delete("depth-probe")


def test_a_broker_that_does_not_answer_is_said_so():
    """In a process whose broker is a closed port: the overview says so instead of raising."""
    env = {**worker_env(), "REDIS_URL": "redis://127.0.0.1:1/0", "CACHE_BACKEND": "locmem"}
    script = (
        "import django, json; django.setup(); from evolution import workers; "
        "print(json.dumps(workers.overview()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    overview = json.loads(done.stdout.strip().splitlines()[-1])
    assert overview["broker_ok"] is False and overview["heartbeats_ok"] is False
    assert [(q["name"], q["depth"]) for q in overview["queues"]] == [
        ("default", None),
        ("sandbox", None),
    ]
