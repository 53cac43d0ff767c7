"""Campaign orchestration throughput: model calls per second through real Celery workers.

A campaign over N trivial seeds whose panel is ONE endpoint allowing 16 concurrent calls, with
target_eval_k = 16: seed calibration asks that endpoint 16 times per seed. Two Celery worker
processes (threads pool, 2 steps each) consume the `default` queue only; each calibration step
fans its 16 calls out, the Redis limiter holds the endpoint at 16 in flight, every call is
logged (LLMCall) and charged to the campaign, tickets and leases are written per step. No
sandbox worker runs, so the execution-bound steps that follow stay queued: what is measured is
the model-bound path alone.

Achieved = calls / (last completion - first completion + one latency). Ideal = 16 / latency.
"DB + broker overhead per call" = the slot time a call holds beyond the server's latency,
averaged: window * 16 / calls - latency. At 0 ms latency the same run shows the orchestration's
own ceiling in calls per second.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from bench.support import ROOT, LoopbackServer, throughput_row, throwaway_database

NAME = "Campaign orchestration throughput (bench_campaign)"
LIMIT = 16
REDIS_DB = 11


def _world(base_url: str, seeds: int):
    from evolution.benchevolver.services import campaign_create
    from evolution.models import ModelEndpoint, Panel, PanelMember, Problem, ProblemSet, TestCase
    from evolution.services.campaigns import campaign_launch

    problems = []
    for i in range(seeds):
        p = Problem.objects.create(
            title=f"echo {i}",
            statement="Print 1.",
            reference_solution="print(1)\n",
            harness="stdio",
            origin_dataset="bench",
            origin_id=f"b{i}",
        )
        TestCase.objects.create(
            problem=p, tier="public", ordinal=0, hidden=False, input_text="", output_text="1\n"
        )
        problems.append(p)
    seed_set = ProblemSet.objects.create(name="bench seeds")
    seed_set.problems.add(*problems)
    endpoint = ModelEndpoint.objects.create(
        name="loopback",
        base_url=base_url,
        model="m",
        concurrency_limit=LIMIT,
        timeout_s=30,
        max_retries=2,
    )
    panel = Panel.objects.create(name="one model")
    PanelMember.objects.create(panel=panel, endpoint=endpoint, attempts=LIMIT)
    campaign = campaign_create(
        name="throughput",
        seed_set=seed_set,
        evolver=endpoint,
        panel=panel,
        settings={"target_eval_k": LIMIT},
    )
    campaign_launch(campaign_id=campaign.pk)
    return campaign


def _workers(db_name: str) -> list[subprocess.Popen]:
    from django.db import connection

    d = connection.settings_dict
    redis_url = (
        os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0").rsplit("/", 1)[0] + f"/{REDIS_DB}"
    )
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{d['USER']}{':' + d['PASSWORD'] if d['PASSWORD'] else ''}@{d['HOST'] or '127.0.0.1'}:{d['PORT'] or 5432}/{db_name}",
        "REDIS_URL": redis_url,
        "BROKER_KIND": "redis",
        "LLM_LIMITER": "redis",
        "CAMPAIGN_TICK_SECONDS": "1",
        "DJANGO_SETTINGS_MODULE": "benchapp.settings",
    }
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    return [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "benchapp",
                "worker",
                "-Q",
                "default",
                "-P",
                "threads",
                "-c",
                "4",
                "-n",
                f"bench{i}@%h",
                "--loglevel",
                "ERROR",
                "--without-gossip",
                "--without-mingle",
            ],
            cwd=ROOT,
            env=env,
            start_new_session=True,
        )
        for i in range(2)
    ]


def _measure(latency_ms: float, seeds: int) -> dict:
    from django.db.models import Max, Min

    from evolution.models import LLMCall

    server = LoopbackServer(latency_ms, content="```python\nprint(1)\n```")
    workers = []
    try:
        with throwaway_database("campaign") as db_name:
            _world(server.base_url, seeds)
            # The campaign rows must be visible to the workers' own connections: we are in
            # autocommit here, so they are.
            workers = _workers(db_name)
            expected = seeds * LIMIT
            deadline = time.monotonic() + 180
            while LLMCall.objects.count() < expected and time.monotonic() < deadline:
                time.sleep(0.5)
            for w in workers:
                os.killpg(w.pid, signal.SIGKILL)
                w.wait(timeout=30)
            workers = []
            calls = LLMCall.objects.filter(status="ok")
            span = calls.aggregate(first=Min("created_at"), last=Max("created_at"))
            count = calls.count()
            stats = server.stats()
    finally:
        for w in workers:
            os.killpg(w.pid, signal.SIGKILL)
        server.stop()
    latency = latency_ms / 1000
    window = (span["last"] - span["first"]).total_seconds() + latency if count else float("nan")
    row = throughput_row("BenchEvolver", latency_ms, count, window, stats["max_in_flight"], LIMIT)
    if latency:
        row["DB + broker overhead per call (ms)"] = round(
            (window * LIMIT / count - latency) * 1000, 1
        )
    return row


def run(args) -> list[dict]:
    quick = bool(getattr(args, "quick", False))
    seeds = 12 if quick else 40
    return [_measure(250, seeds), _measure(0, seeds)]
