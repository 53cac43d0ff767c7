"""A distributed judge batch through two REAL Celery workers on the sandbox queue: results come
back in job order as they are ready, and the chunk of a worker killed with SIGKILL while it
judges is sent again by the batch and judged by the other worker."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import pytest
import redis
from django.conf import settings

from evolution.sandbox import Limits, TestSpec, batch
from evolution.sandbox.batch import JudgeJob, judge_many
from tests.support.workers import ROOT, kill_group, wait_for, wait_until_consuming, worker_env

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SLOW = 3  # the job whose worker is killed while it judges it
SLOW_LIMIT_S = 12.0
GRACE_S = 5.0  # batch.RESEND_GRACE_S for this test (30 s by default)


def _start(name: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "benchapp", "worker", "-Q", "sandbox", "-c", "1"]
        + ["-n", f"{name}@%h", "--loglevel", "WARNING", "--without-gossip", "--without-mingle"],
        cwd=ROOT,
        env=worker_env(),
        start_new_session=True,  # its own process group: kill -9 takes its pool child too
    )


def _jobs() -> list[JudgeJob]:
    jobs = []
    for i in range(8):
        code = "print(int(input()) * 2)"
        if i == SLOW:
            code = "import time\ntime.sleep(8)\n" + code
        # Job i has i % 3 + 1 tests, and job 5 expects a wrong answer: each job's result can be
        # told apart from its neighbours', so their order shows.
        tests = [TestSpec(str(i + k), str(2 * (i + k))) for k in range(i % 3 + 1)]
        if i == 5:
            tests[0] = TestSpec("5", "11")
        jobs.append(
            JudgeJob(
                code=code,
                tests=tests,
                harness="stdio",
                limits=Limits(time_s=SLOW_LIMIT_S, memory_mb=256),
            )
        )
    return jobs


def _running(app, start: int) -> str | None:
    """The worker whose active task is the chunk starting at job ``start``."""
    for worker, tasks in (app.control.inspect(timeout=1.0).active() or {}).items():
        for task in tasks:
            args = task.get("args") or []
            if len(args) >= 2 and args[1] == start:
                return worker
    return None


def test_results_stream_back_in_order_and_a_killed_workers_chunk_is_redone(monkeypatch):
    from benchapp.celery import app

    monkeypatch.setattr(batch, "RESEND_GRACE_S", GRACE_S)
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    workers = {"judge-a": _start("judge-a"), "judge-b": _start("judge-b")}
    try:
        wait_until_consuming(queues=("sandbox",))
        # What the batch reads from Redis: (index or "start", job index or chunk start,
        # worker that pushed it, when).
        popped: list[tuple[object, int, str, float]] = []
        real_redis = batch._redis

        class Recording:
            def __init__(self):
                self.client = real_redis()

            def blpop(self, keys, timeout=0):
                item = self.client.blpop(keys, timeout=timeout)
                if item is not None:
                    first, second, worker = json.loads(item[1])
                    what = second if first == "start" else first
                    popped.append(
                        (first if first == "start" else "result", what, worker, time.monotonic())
                    )
                return item

            def __getattr__(self, name):
                return getattr(self.client, name)

        batch._redis = Recording
        yielded: list[tuple[object, float]] = []
        failure: list[BaseException] = []

        def consume():
            try:
                for result in judge_many(_jobs(), distributed=True):
                    yielded.append((result, time.monotonic()))
            except BaseException as exc:  # reported below
                failure.append(exc)

        consumer = threading.Thread(target=consume, daemon=True)
        consumer.start()

        victim = wait_for(lambda: _running(app, SLOW), 120, "a worker judging the slow job")
        name = victim.split("@", 1)[0]
        kill_group(workers.pop(name))
        survivor = next(iter(workers))

        consumer.join(180)
        batch._redis = real_redis
        assert not failure, failure
        assert not consumer.is_alive(), "the batch did not finish"

        # Every job judged, each result in its job's place.
        expected = [("AC", i % 3 + 1, i % 3 + 1) for i in range(8)]
        expected[5] = ("WA", 2, 3)
        assert [(r.verdict, r.passed, r.total) for r, _ in yielded] == expected

        def short(worker):
            return worker.split("@", 1)[0]

        # The killed worker started the slow job's chunk and never delivered it; the batch
        # sent it again once overdue (its time budget plus the grace) and the survivor judged it.
        starts = [
            (short(w), at)
            for kind, at_index, w, at in popped
            if kind == "start" and at_index == SLOW
        ]
        assert [w for w, _ in starts] == [name, survivor]
        assert starts[1][1] - starts[0][1] >= SLOW_LIMIT_S + GRACE_S - 1
        slow = [
            (short(w), at) for kind, index, w, at in popped if kind == "result" and index == SLOW
        ]
        assert [w for w, _ in slow] == [survivor]
        assert {short(w) for _, _, w, _ in popped} == {"judge-a", "judge-b"}
        # Streamed: the first results were handed out well before the slow job's result was
        # read, and nothing after the slow job was handed out before it.
        assert yielded[0][1] < slow[0][1] - SLOW_LIMIT_S
        assert all(at >= yielded[SLOW][1] for _, at in yielded[SLOW + 1 :])
        assert not redis.Redis.from_url(settings.REDIS_URL).keys("benchforge:judge-batch:*")
    finally:
        batch._redis = real_redis if "real_redis" in locals() else batch._redis
        for proc in workers.values():
            kill_group(proc, signal.SIGTERM)
