"""The platform's fan-out of model calls (``evolution.llm.fanout``), against the loopback server:
calls overlap up to the fan-out setting, a fan-out of 1 is one call at a time, the endpoints'
limits bound the threads and the requests in flight, and results come back in input order."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import DatabaseError, connection, transaction

from evolution.llm import LLMClient, LLMError, fanout
from evolution.models import LLMCall
from tests.factories import ModelEndpointFactory

pytestmark = pytest.mark.django_db(transaction=True)


def _calls(endpoint, count: int) -> list:
    client = LLMClient(endpoint)
    return [
        lambda i=i: (
            client.chat(
                [{"role": "user", "content": f"question {i}"}], role="solver", replay_key=f"q={i}"
            ).content
        )
        for i in range(count)
    ]


def test_calls_overlap_up_to_the_fan_out_and_come_back_in_input_order(fake, settings):
    settings.ENGINE_FANOUT_THREADS = 4
    fake.latency = 0.2
    # Answers echo the key; later keys answer first, so completion order is reversed.
    fake.responder = lambda body, headers: headers.get("x-benchforge-key", "")
    endpoint = ModelEndpointFactory(base_url=fake.base_url, concurrency_limit=8)
    width = fanout.width_for(endpoint)
    assert width == 4

    started = time.perf_counter()
    answers = fanout.fan_out(_calls(endpoint, 8), width)
    elapsed = time.perf_counter() - started

    assert answers == [f"q={i}" for i in range(8)]
    assert fake.max_in_flight == 4
    assert elapsed < 8 * 0.2  # two waves of four, not eight calls in a row
    assert LLMCall.objects.filter(status="ok").count() == 8


def test_a_fan_out_of_one_asks_one_call_at_a_time(fake, settings):
    settings.ENGINE_FANOUT_THREADS = 1
    fake.latency = 0.05
    endpoint = ModelEndpointFactory(base_url=fake.base_url, concurrency_limit=8)
    assert fanout.width_for(endpoint) == 1
    fanout.fan_out(_calls(endpoint, 5), fanout.width_for(endpoint))
    assert fake.request_count == 5
    assert fake.max_in_flight == 1


def test_the_endpoints_limits_bound_the_threads_and_the_requests_in_flight(fake, settings):
    settings.ENGINE_FANOUT_THREADS = 8
    fake.latency = 0.1
    narrow = ModelEndpointFactory(base_url=fake.base_url, concurrency_limit=2)
    other = ModelEndpointFactory(base_url=fake.base_url, concurrency_limit=3)
    assert fanout.width_for(narrow) == 2
    assert fanout.width_for(narrow, other) == 5
    assert fanout.width_for(narrow, narrow) == 2  # an endpoint named twice counts once
    # Even with more threads than the endpoint allows, its limiter holds it to its limit.
    fanout.fan_out(_calls(narrow, 8), 8)
    assert fake.request_count == 8
    assert fake.max_in_flight == 2


def test_every_job_runs_and_the_first_failure_in_input_order_is_raised():
    ran: list[int] = []
    lock = threading.Lock()

    def job(i):
        time.sleep(0.01 * (5 - i))
        with lock:
            ran.append(i)
        if i in (1, 3):
            raise LLMError(f"failed {i}")
        return i

    jobs = [lambda i=i: job(i) for i in range(5)]
    outcomes = fanout.fan_out(jobs, 5, return_exceptions=True)
    assert sorted(ran) == [0, 1, 2, 3, 4]
    assert [o if isinstance(o, int) else str(o) for o in outcomes] == [
        0,
        "failed 1",
        2,
        "failed 3",
        4,
    ]
    with pytest.raises(LLMError, match="failed 1"):
        fanout.raise_first(outcomes)
    ran.clear()
    with pytest.raises(LLMError, match="failed 1"):
        fanout.fan_out(jobs, 5)
    assert sorted(ran) == [0, 1, 2, 3, 4]


def test_inside_a_transaction_the_calls_run_in_order_on_the_callers_connection(fake, settings):
    # Threads have connections of their own, which could not see the caller's uncommitted rows.
    settings.ENGINE_FANOUT_THREADS = 4
    endpoint = ModelEndpointFactory(base_url=fake.base_url, concurrency_limit=4)
    threads: set[int] = set()

    def job():
        threads.add(threading.get_ident())
        return _calls(endpoint, 1)[0]()

    with transaction.atomic():
        assert not fanout.fans_out(4, 3)
        fanout.fan_out([job, job, job], 4)
    assert threads == {threading.get_ident()}
    assert fake.max_in_flight == 1


def test_a_job_whose_connection_died_leaves_the_next_job_of_its_thread_a_fresh_one():
    # The database cut a thread's connection (a restart, a proxy): the job fails, the next job
    # the same thread takes opens a new connection instead of failing on the dead one.
    def cut():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")

    def query():
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone()[0]

    outcomes = fanout.fan_out([cut, cut, *[query] * 6], 2, return_exceptions=True)
    assert all(isinstance(o, DatabaseError) for o in outcomes[:2]), outcomes[:2]
    assert outcomes[2:] == [1] * 6
