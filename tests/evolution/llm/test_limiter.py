"""The per-endpoint concurrency limit, measured by the loopback server's in-flight counter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings as django_settings
from django.db import connection

from evolution.llm import LLMClient, LLMError
from evolution.llm import limiter as limiter_module
from evolution.llm.limiter import LocalLimiter, RedisLimiter, limiter_for
from evolution.models import LLMCall
from tests.factories import ModelEndpointFactory

ROOT = Path(__file__).resolve().parents[3]


def _hammer(endpoint, *, threads: int, calls: int) -> list[Exception]:
    errors: list[Exception] = []

    def work():
        client = LLMClient(endpoint)
        try:
            for _ in range(calls):
                try:
                    client.chat([{"role": "user", "content": "x"}], role="solver")
                except Exception as exc:
                    errors.append(exc)
        finally:
            connection.close()

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return errors


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["redis", "local"])
def test_it_never_exceeds_the_limit_with_many_threads(fake, settings, kind):
    settings.LLM_LIMITER = kind
    fake.latency = 0.03
    endpoint = ModelEndpointFactory(base_url=fake.base_url, concurrency_limit=3)

    errors = _hammer(endpoint, threads=10, calls=4)

    assert errors == []
    assert fake.request_count == 40
    assert fake.max_in_flight <= 3
    # The limit is reached, not merely respected by running one at a time.
    assert fake.max_in_flight == 3
    assert LLMCall.objects.filter(endpoint=endpoint, status="ok").count() == 40


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_it_holds_the_limit_across_two_worker_processes_sharing_redis(fake, settings):
    settings.LLM_LIMITER = "redis"
    fake.latency = 0.05
    endpoint = ModelEndpointFactory(base_url=fake.base_url, concurrency_limit=4)
    db = django_settings.DATABASES["default"]
    env = {
        **os.environ,
        "DATABASE_URL": (
            f"postgres://{quote(db['USER'])}:{quote(db['PASSWORD'] or '')}"
            f"@{db['HOST']}:{db['PORT']}/{db['NAME']}"
        ),
        "REDIS_URL": django_settings.REDIS_URL,
        "BROKER_KIND": "redis",
        "LLM_LIMITER": "redis",
        "LLM_BACKOFF_BASE_S": "0.001",
    }
    command = [
        sys.executable,
        "-m",
        "tests.evolution.llm._worker",
        f"--endpoint-id={endpoint.pk}",
        "--threads=6",
        "--calls-per-thread=5",
    ]
    workers = [
        subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [json.loads(w.communicate(timeout=120)[0].strip().splitlines()[-1]) for w in workers]

    assert [w.returncode for w in workers] == [0, 0]
    assert [o["errors"] for o in outputs] == [[], []]
    assert sum(o["ok"] for o in outputs) == 60 == fake.request_count
    assert fake.max_in_flight == 4
    assert len({r.body["messages"][0]["content"].split()[1] for r in fake.requests}) == 2
    assert LLMCall.objects.filter(endpoint=endpoint).count() == 60


@pytest.mark.django_db(transaction=True)
def test_it_frees_the_slot_of_a_holder_that_died_once_its_lease_expires():
    endpoint = ModelEndpointFactory(concurrency_limit=1)
    crashed = RedisLimiter(endpoint_id=endpoint.pk, limit=1, lease_s=0.3)
    assert crashed.try_acquire() is not None  # never released: its worker "died"
    waiting = RedisLimiter(endpoint_id=endpoint.pk, limit=1, lease_s=0.3)

    assert waiting.try_acquire() is None
    started = time.monotonic()
    token = waiting.acquire(timeout=5)
    waited = time.monotonic() - started

    assert token
    assert 0.1 < waited < 2.0
    waiting.release(token)
    assert waiting.in_use() == 0


@pytest.mark.django_db(transaction=True)
def test_it_wakes_a_waiter_as_soon_as_a_slot_is_released(monkeypatch):
    # Without the release's notification the waiter would sleep through this whole interval.
    monkeypatch.setattr(limiter_module, "WAKE_INTERVAL_S", 3.0)
    endpoint = ModelEndpointFactory(concurrency_limit=1)
    limiter = RedisLimiter(endpoint_id=endpoint.pk, limit=1, lease_s=60)
    held = limiter.acquire()
    threading.Timer(0.1, limiter.release, args=(held,)).start()

    started = time.monotonic()
    token = limiter.acquire(timeout=5)

    assert time.monotonic() - started < 1.5
    limiter.release(token)


@pytest.mark.django_db(transaction=True)
def test_it_gives_up_waiting_for_a_slot_after_the_timeout():
    endpoint = ModelEndpointFactory(concurrency_limit=1)
    limiter = RedisLimiter(endpoint_id=endpoint.pk, limit=1, lease_s=60)
    held = limiter.acquire()
    try:
        with pytest.raises(LLMError, match="no free model slot"):
            limiter.acquire(timeout=0.3)
    finally:
        limiter.release(held)


def test_it_uses_a_process_local_semaphore_when_configured(settings):
    endpoint = ModelEndpointFactory.build(pk=10_000, concurrency_limit=2)
    settings.LLM_LIMITER = "local"
    local = limiter_for(endpoint)
    settings.LLM_LIMITER = "redis"
    shared = limiter_for(endpoint)

    assert isinstance(local, LocalLimiter) and isinstance(shared, RedisLimiter)
    # Both slots held: a third caller times out.
    with (
        local.slot(),
        local.slot(),
        pytest.raises(LLMError, match="no free model slot"),
        local.slot(timeout=0.05),
    ):
        pass
