"""The independent evaluation on a real Celery worker: the curator's action queues it, the
worker samples the draft's candidates over real HTTP and judges them in the sandbox, and the
gate run afterwards reads the independent figure (run in a pytest process of its own by
tests/releases/test_independent_worker.py, as the living loop is)."""

from __future__ import annotations

import signal

import pytest
import redis
from django.conf import settings

from releases import independent, services
from releases.models import GateEvaluation
from tests.support.answers import fenced
from tests.support.fake_openai import FakeOpenAI
from tests.support.gate_rules import SELECTION_TIME_OK
from tests.support.workers import kill_group, start_worker, wait_for, wait_until_consuming

from .builders import SUM_CODE, WRONG_CODE, crafted_world
from .living_support import endpoint

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _settled(evaluation_id: int) -> GateEvaluation | None:
    evaluation = GateEvaluation.objects.get(pk=evaluation_id)
    return None if evaluation.is_active else evaluation


def test_the_worker_runs_the_independent_evaluation_and_the_gate_reads_it():
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    world = crafted_world()
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="LiveCodeBench-Plus")
    release = services.release_create(benchmark=bench, campaigns=[world.campaign])
    ok = world.problem("E-OK")

    def answer(body, headers):
        solved = "Task E-OK." in body["messages"][-1]["content"]
        return fenced(SUM_CODE if solved else WRONG_CODE)

    with FakeOpenAI() as server:
        server.responder = answer
        fresh = endpoint(server, "fresh")
        independent.panel_update(
            release=release, endpoints=[fresh], samples=2, exclude_selection_models=True
        )
        worker = start_worker("gate-eval", pool_args=("-c", "1", "-P", "solo"))
        try:
            wait_until_consuming()
            evaluation = services.gate_evaluation_start(release=release)
            # Generous: 24 model calls and 24 sandboxed judgements on a loaded machine.
            evaluation = wait_for(lambda: _settled(evaluation.pk), 300, "the evaluation")
        finally:
            kill_group(worker, signal.SIGTERM)
    assert evaluation.state == "completed", evaluation.error
    assert server.request_count == 24
    assert independent.progress(evaluation=evaluation)["judged"] == 24

    run = services.gate_run_create(release=release)
    entry = next(e for e in run.report if e["public_id"] == ok.public_id)
    assert entry["facts"]["difficulty_source"] == "independent"
    assert entry["passed"] is False  # 2/2 independently: outside [0.05, 0.75]
