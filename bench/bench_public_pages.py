"""Public release pages under load: requests/s and p99 latency, page cache on and off.

A published release (the crafted test world: 3 problems and their tests) is served by
gunicorn with 2 sync workers, as in production, from a throwaway database. A wrk-style
closed loop of CONNECTIONS client threads (a new connection per request, as gunicorn's sync
workers close each one) asks for one page for DURATION seconds; each row is one page, measured with the page cache on (the default) and off
(PUBLIC_PAGE_CACHE_SECONDS=0) in the same run, so the ratio is the cache's effect. The last
row is /healthz asked alone while the leaderboard is under the same load: the probe's p99.
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from bench.support import ROOT, throwaway_database

NAME = "Public release pages under load (bench_public_pages)"
CONNECTIONS = 16
DURATION = 8.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _gunicorn(db_name: str, cache_seconds: int) -> tuple[subprocess.Popen, int]:
    from django.db import connection

    d = connection.settings_dict
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{d['USER']}{':' + d['PASSWORD'] if d['PASSWORD'] else ''}@{d['HOST'] or '127.0.0.1'}:{d['PORT'] or 5432}/{db_name}",
        "PUBLIC_PAGE_CACHE_SECONDS": str(cache_seconds),
        "DJANGO_SETTINGS_MODULE": "benchapp.settings",
        "LOG_LEVEL": "WARNING",
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "benchapp.wsgi:application",
            "--workers=2",
            f"--bind=127.0.0.1:{port}",
            "--log-level=warning",
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if _get(port, "/healthz")[0] in (200, 503):
                return process, port
        except OSError:
            time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    raise RuntimeError("gunicorn did not start")


def _get(port: int, path: str) -> tuple[int, float]:
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path, headers={"Host": "127.0.0.1"})
        response = conn.getresponse()
        response.read()
        return response.status, time.perf_counter() - started
    finally:
        conn.close()


def _load(port: int, path: str, seconds: float, *, probe: str | None = None) -> dict:
    latencies: list[float] = []
    probe_latencies: list[float] = []
    errors = [0]
    stop = time.monotonic() + seconds
    lock = threading.Lock()

    def client():
        while time.monotonic() < stop:
            try:
                status, took = _get(port, path)
            except OSError:
                status, took = 0, 0.0
            with lock:
                if status == 200:
                    latencies.append(took)
                else:
                    errors[0] += 1

    def prober():
        while time.monotonic() < stop:
            status, took = _get(port, probe)
            probe_latencies.append(took if status in (200, 503) else float("inf"))
            time.sleep(0.1)

    threads = [threading.Thread(target=client) for _ in range(CONNECTIONS)]
    if probe:
        threads.append(threading.Thread(target=prober))
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began

    def p99(values):
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000 if ordered else 0

    return {
        "rps": len(latencies) / elapsed,
        "p99": p99(latencies),
        "errors": errors[0],
        "probe_p99": p99(probe_latencies),
    }


def _world() -> dict[str, str]:
    from tests.releases.conftest import frozen_release

    _, release = frozen_release(publish=True)
    base = f"/releases/{release.benchmark.slug}/v{release.version}/"
    return {
        "release page": base,
        "card": base + "card.md",
        "leaderboard": base + "leaderboard/",
        "item page": base + f"items/{release.items.first().public_id}/",
    }


def run(args) -> list[dict]:
    seconds = 3.0 if args.quick else DURATION
    rows = []
    with throwaway_database("public") as db_name:
        pages = _world()
        results = {}
        for cache_seconds in (3600, 0):
            process, port = _gunicorn(db_name, cache_seconds)
            try:
                for label, path in pages.items():
                    _get(port, path)  # the first render fills the cache
                    results[(label, cache_seconds)] = _load(port, path, seconds)
                if cache_seconds:
                    results[("healthz", 0)] = _load(
                        port, pages["leaderboard"], seconds, probe="/healthz"
                    )
            finally:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)
    for label in pages:
        on, off = results[(label, 3600)], results[(label, 0)]
        rows.append(
            {
                "page (2 gunicorn workers, 16 connections)": label,
                "cached req/s": round(on["rps"], 1),
                "cached p99 (ms)": round(on["p99"], 1),
                "uncached req/s": round(off["rps"], 1),
                "uncached p99 (ms)": round(off["p99"], 1),
                "ratio (req/s)": round(on["rps"] / off["rps"], 2) if off["rps"] else "",
                "errors": on["errors"] + off["errors"],
            }
        )
    probe = results[("healthz", 0)]
    rows.append(
        {
            "page (2 gunicorn workers, 16 connections)": "/healthz while the leaderboard is loaded",
            "cached p99 (ms)": round(probe["probe_p99"], 1),
            "cached req/s": round(probe["rps"], 1),
        }
    )
    return rows
