"""judge_many: whole workloads, results in job order, locally and through the sandbox queue."""

from __future__ import annotations

import json
import threading

import pytest

from evolution.sandbox import Limits, TestSpec, batch
from evolution.sandbox.batch import JudgeJob, judge_many

LIMITS = Limits(time_s=3.0, memory_mb=256)


def _jobs():
    slow = "import time\ntime.sleep(0.4)\nprint(int(input()) * 2)"
    fast = "print(int(input()) * 2)"
    wrong = "print(0)"
    return [
        JudgeJob(code=slow, tests=[TestSpec("1", "2")], harness="stdio", limits=LIMITS),
        JudgeJob(code=fast, tests=[TestSpec("2", "4")], harness="stdio", limits=LIMITS),
        JudgeJob(code=wrong, tests=[TestSpec("3", "6")], harness="stdio", limits=LIMITS),
        JudgeJob(code=fast, tests=[TestSpec("1", "2")], harness="nonsense", limits=LIMITS),
        JudgeJob(
            code="def f(x):\n    return x + 1",
            tests=[TestSpec("1", "2"), TestSpec("5", "6")],
            harness="function",
            entry_point="f",
            limits=LIMITS,
        ),
    ]


def _summary(results):
    return [
        r.args[0].split(" ")[0] if isinstance(r, ValueError) else (r.verdict, r.passed)
        for r in results
    ]


EXPECTED = [("AC", 1), ("AC", 1), ("WA", 0), "harness", ("AC", 2)]


def test_judge_many_yields_one_result_per_job_in_job_order(backend):
    # The first job is the slowest: with two workers the later ones finish first, and still
    # come back after it.
    assert _summary(judge_many(_jobs(), workers=2, backend=backend)) == EXPECTED


def test_a_distributed_batch_streams_results_back_in_job_order(monkeypatch, settings):
    # Stand-ins for sandbox workers: a thread takes the chunks off the queue in the REVERSE
    # order, so results reach Redis out of order; the real chunk task body runs (it judges in
    # the sandbox and pushes each result to the batch's Redis list).
    settings.BROKER_KIND = "redis"
    jobs = _jobs()
    sent = []
    all_sent = threading.Event()

    def send_task(name, args, queue):
        assert (name, queue) == ("evolution.tasks.sandbox_judge_chunk", "sandbox")
        batch_id, start, documents = args
        sent.append((batch_id, start, json.loads(json.dumps(documents))))
        if sum(len(d) for _, _, d in sent) == len(jobs):
            all_sent.set()

    def worker():
        all_sent.wait(30)
        for batch_id, start, documents in reversed(sent):
            batch.judge_chunk(batch_id, start, documents, 1)

    from celery import current_app

    monkeypatch.setattr(current_app, "send_task", send_task)
    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    assert _summary(judge_many(jobs, distributed=True)) == EXPECTED
    thread.join(30)
    assert len(sent) > 1  # the workload really was split into several queued chunks
    assert not batch._redis().exists(batch._key(sent[0][0]))  # nothing left behind


def test_a_distributed_batch_needs_redis(settings):
    settings.BROKER_KIND = "filesystem"
    with pytest.raises(ValueError, match="BROKER_KIND=redis"):
        list(judge_many(_jobs(), distributed=True))


def test_jobs_survive_the_trip_through_the_queue_unchanged():
    job = _jobs()[4]
    job.comparison = {"mode": "float", "isolation": "fork"}
    again = JudgeJob.from_dict(json.loads(json.dumps(job.to_dict())))
    assert again == job


def test_a_prewarmed_pool_serves_the_first_job_without_starting_a_sandbox(monkeypatch):
    from evolution.sandbox.backends.bwrap import BwrapBackend

    backend = BwrapBackend()
    try:
        backend.prewarm()
        assert len(backend._idle) == 1

        def no_cold_start():
            raise AssertionError("the first job started a sandbox instead of using the pool")

        monkeypatch.setattr(backend, "_start", no_cold_start)
        results = list(judge_many(_jobs()[1:2], workers=1, backend=backend))
        assert _summary(results) == [("AC", 1)]
    finally:
        backend.shutdown()


def test_a_pool_starting_in_the_background_is_waited_for_not_duplicated(monkeypatch):
    # judge_batch starts its sandboxes while it parses the jobs (prewarm(wait=False)): a job
    # that comes before they are ready takes one of them instead of starting a third.
    from evolution.sandbox.backends.bwrap import BwrapBackend

    backend = BwrapBackend()
    spawned = []
    real_spawn = backend._spawn

    def counted_spawn(cgroup_set=None):
        spawned.append(threading.current_thread().name)
        return real_spawn(cgroup_set)

    monkeypatch.setattr(backend, "_spawn", counted_spawn)
    try:
        backend.prewarm(2, wait=False)
        # Spawned on the caller's thread; made ready in the background.
        assert spawned == [threading.current_thread().name] * 2
        assert len(backend._idle) + backend._starting == 2
        results = list(judge_many(_jobs()[1:3], workers=2, backend=backend))
        assert _summary(results) == [("AC", 1), ("WA", 0)]
        assert len(spawned) == 2
        assert backend._starting == 0
    finally:
        backend.shutdown()


def test_a_pool_that_cannot_start_in_the_background_reports_it_on_open(monkeypatch):
    from evolution.sandbox.backends.bwrap import BwrapBackend
    from evolution.sandbox.types import SandboxError

    backend = BwrapBackend()

    def broken(cgroup_set=None):
        if cgroup_set is not None:
            cgroup_set.close()
        raise SandboxError("could not start the sandbox: no such file")

    monkeypatch.setattr(backend, "_spawn", broken)
    try:
        backend.prewarm(1, wait=False)
        with pytest.raises(SandboxError, match="no such file"):
            backend.open(limits=LIMITS)  # waits for the failed start, then tries itself
        assert backend._starting == 0 and backend._idle == []
    finally:
        backend.shutdown()


def test_the_chunk_task_is_registered_for_the_sandbox_queue():
    import evolution.tasks  # noqa: F401 - what the worker imports
    from benchapp.celery import app

    task = app.tasks["evolution.tasks.sandbox_judge_chunk"]
    assert app.amqp.router.route({}, task.name)["queue"].name == "sandbox"


def test_a_worker_loading_its_tasks_does_not_import_the_web_layer():
    # What a Celery worker does at start: set up Django, load the task modules (its Django
    # fix-up would run the URL checks and so import the API and every app's routers).
    script = (
        "import sys, django; django.setup()\n"
        "from benchapp.celery import app\n"
        "app.loader.import_default_modules()\n"
        "assert 'evolution.tasks' in sys.modules and 'evolution.sandbox.tasks' in sys.modules\n"
        "print(sorted(m for m in ('benchapp.api', 'benchapp.urls', 'benchapp.views') if m in sys.modules))\n"
    )
    import os
    import subprocess
    import sys

    from django.conf import settings

    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "CELERY_SKIP_CHECKS"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
