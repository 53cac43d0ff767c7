"""Model gateway: throughput under a shared concurrency limit, and the gateway's cost per call.

1. Throughput. The loopback server (tests/support/fake_openai.py, its own process) answers
   after 250 ms. One endpoint allows 16 concurrent calls; 2 worker processes with 16 threads
   each call it through LLMClient (Redis limiter, LLMCall rows, campaign counters), all
   starting at one instant and calling until a deadline. Achieved = calls completed inside
   that window / its length. The ideal is 16 / 0.25 s = 64 calls/s; the row's ratio is
   achieved / ideal (target >= 0.8). The server's own in-flight counter shows the limit held.
2. Overhead. Against the same server at 0 ms latency, one thread: LLMClient.chat per call
   minus a bare httpx POST per call (same pooled client, same body), plus its two parts
   measured alone: the limiter's acquire + release round trips and the budget reservation +
   LLMCall insert + campaign counter update.

Runs in a throwaway database (created and dropped here) so it never touches real data.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
import time
from pathlib import Path

from bench.support import LoopbackServer, throwaway_database

NAME = "Model gateway (bench_gateway)"

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 16
LATENCY_S = 0.25
PROCESSES = 2
THREADS = 16


def _worker(endpoint_id: int, campaign_id: int, start_at: float, stop_at: float, results) -> None:
    """One worker process: THREADS threads calling from ``start_at`` until ``stop_at``."""
    from django.db import connection

    from evolution.llm import CallContext, LLMClient
    from evolution.models import ModelEndpoint

    endpoint = ModelEndpoint.objects.get(pk=endpoint_id)
    connection.close()
    spans: list[tuple[float, float]] = []
    errors: list[str] = []
    lock = threading.Lock()

    def work(index: int) -> None:
        client = LLMClient(endpoint, CallContext(campaign_id=campaign_id))
        time.sleep(max(0.0, start_at - time.time()))
        n = 0
        try:
            while time.time() < stop_at:
                started = time.time()
                n += 1
                try:
                    client.chat(
                        [{"role": "user", "content": f"process {os.getpid()} thread {index} #{n}"}],
                        role="solver",
                    )
                except Exception as exc:
                    with lock:
                        errors.append(f"{exc.__class__.__name__}: {exc}")
                    continue
                with lock:
                    spans.append((started, time.time()))
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put({"spans": spans, "errors": errors[:5], "error_count": len(errors)})


def _throughput(quick: bool) -> list[dict]:
    from django.db import connections

    from evolution.models import Campaign, LLMCall, ModelEndpoint

    server = LoopbackServer(LATENCY_S * 1000)
    try:
        endpoint = ModelEndpoint.objects.create(
            name="bench-throughput",
            base_url=server.base_url,
            model="bench",
            concurrency_limit=LIMIT,
            timeout_s=30,
            max_retries=0,
        )
        campaign = Campaign.objects.create(name="bench-throughput")
        duration = 3.0 if quick else 10.0
        # Every thread of both processes starts at the same instant, once all are forked.
        start_at = time.time() + 1.5
        stop_at = start_at + duration
        connections.close_all()  # forked children must open their own connections
        context = multiprocessing.get_context("fork")
        results = context.Queue()
        workers = [
            context.Process(
                target=_worker, args=(endpoint.pk, campaign.pk, start_at, stop_at, results)
            )
            for _ in range(PROCESSES)
        ]
        for worker in workers:
            worker.start()
        outcomes = [results.get(timeout=600) for _ in workers]
        for worker in workers:
            worker.join(timeout=30)
        stats = server.stats()
    finally:
        server.stop()

    spans = [span for outcome in outcomes for span in outcome["spans"]]
    error_count = sum(o["error_count"] for o in outcomes)
    if error_count:
        samples = [e for o in outcomes for e in o["errors"]]
        raise RuntimeError(f"{error_count} calls failed, e.g. {samples[:3]}")
    # Steady state: calls completed inside the window (the last, unfinished round and the
    # calls that overran the deadline are not counted; they would be in a longer run).
    completed = sum(1 for _, end in spans if end <= stop_at)
    achieved = completed / duration
    ideal = LIMIT / LATENCY_S
    campaign.refresh_from_db()
    recorded = LLMCall.objects.filter(endpoint=endpoint, status="ok").count()
    return [
        {
            "measure": (
                f"calls/s, {PROCESSES} processes x {THREADS} threads, limit {LIMIT}, "
                f"{int(LATENCY_S * 1000)} ms latency"
            ),
            "value": achieved,
            "baseline": ideal,
            "ratio": achieved / ideal,
            "target": ">= 0.8",
            "note": f"{completed} calls completed in a {duration:.0f} s window",
        },
        {
            "measure": "max requests in flight at the server",
            "value": stats["max_in_flight"],
            "baseline": LIMIT,
            "ratio": stats["max_in_flight"] / LIMIT,
            "target": "<= 1.0",
            "note": f"{recorded} LLMCall rows, campaign calls_made={campaign.calls_made}",
        },
    ]


def _overhead(quick: bool) -> list[dict]:
    from evolution.llm import CallContext, LLMClient
    from evolution.llm.cassette import canonical_json
    from evolution.llm.limiter import limiter_for
    from evolution.llm.remote import http_client
    from evolution.llm.services import campaign_budget_reserve, llm_call_record
    from evolution.models import Campaign, ModelEndpoint

    calls = 100 if quick else 400
    server = LoopbackServer(0)
    try:
        endpoint = ModelEndpoint.objects.create(
            name="bench-overhead",
            base_url=server.base_url,
            model="bench",
            concurrency_limit=LIMIT,
            timeout_s=30,
            max_retries=0,
        )
        campaign = Campaign.objects.create(name="bench-overhead")
        context = CallContext(campaign_id=campaign.pk)
        client = LLMClient(endpoint, context)
        messages = [{"role": "user", "content": "overhead probe"}]
        body = client._body(messages, None, None, None)
        raw = http_client(base_url=endpoint.base_url, timeout_s=float(endpoint.timeout_s))
        payload = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "X-BenchForge-Role": "solver"}
        for _ in range(20):  # warm connections, the pool and the database
            client.chat(messages, role="solver")
            raw.post("chat/completions", content=payload, headers=headers).raise_for_status()

        def timed(fn) -> float:
            started = time.perf_counter()
            for _ in range(calls):
                fn()
            return (time.perf_counter() - started) / calls * 1000

        # Interleave the two a few times so drift on a shared machine hits both alike.
        gateway_ms, raw_ms = [], []
        for _ in range(3):
            gateway_ms.append(timed(lambda: client.chat(messages, role="solver")))
            raw_ms.append(
                timed(
                    lambda: raw.post(
                        "chat/completions", content=payload, headers=headers
                    ).raise_for_status()
                )
            )
        limiter = limiter_for(endpoint)

        def limiter_round_trip():
            with limiter.slot():
                pass

        limiter_ms = timed(limiter_round_trip)
        request_json = canonical_json(body)

        def record():
            campaign_budget_reserve(campaign_id=campaign.pk)
            llm_call_record(
                endpoint=endpoint,
                context=context,
                role="solver",
                template="",
                template_version="",
                request_json=request_json,
                response_text='{"choices": []}',
                tokens_in=10,
                tokens_out=10,
                status="ok",
            )

        record_ms = timed(record)
    finally:
        server.stop()
    gateway, bare = min(gateway_ms), min(raw_ms)
    return [
        {
            "measure": "LLMClient.chat per call at 0 ms latency (ms)",
            "value": gateway,
            "baseline": bare,
            "ratio": gateway / bare,
            "note": "baseline: bare httpx POST to the same server",
        },
        {
            "measure": "gateway overhead per call (ms)",
            "value": gateway - bare,
            "note": f"best of 3 x {calls} sequential calls",
        },
        {"measure": "  of which limiter acquire + release (ms)", "value": limiter_ms},
        {
            "measure": "  of which budget reserve + LLMCall insert + counters (ms)",
            "value": record_ms,
        },
    ]


def run(args) -> list[dict]:
    from django.conf import settings

    quick = bool(getattr(args, "quick", False))
    # The throughput figure is about the cross-process limiter, which only Redis provides.
    previous_limiter = settings.LLM_LIMITER
    settings.LLM_LIMITER = "redis"
    try:
        with throwaway_database("gateway"):
            rows = _throughput(quick)
            rows += _overhead(quick)
    finally:
        settings.LLM_LIMITER = previous_limiter
    return rows
