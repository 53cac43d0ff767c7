"""Public release pages under load: requests/s and p99 latency, page cache on and off.

A published release (the crafted test world: 3 problems and their tests) is served by
gunicorn with the worker options of docker-compose.yml's ``web`` command (worker class,
workers, threads; ``BENCH_GUNICORN_ARGS`` replaces them, e.g. ``"--workers 3"`` for sync
workers), from a throwaway database. A wrk-style
closed loop of CONNECTIONS client threads (a new connection per request, as gunicorn's sync
workers close each one) asks for one page for DURATION seconds; each row is one page, measured with the page cache on (the default) and off
(PUBLIC_PAGE_CACHE_SECONDS=0) in the same run, so the ratio is the cache's effect. The last
row is /healthz asked every 100 ms (from a process of its own) while the leaderboard is under
the same load: the probe's p99.

Then, with many connections (``MANY`` at once, as the outage report's 200), an asyncio
closed loop (wrk-style: each connection sends a request, waits for the whole answer, sends the
next; one client thread, so the client is not what saturates) measures the cached release
page, ``/healthz`` alone, and ``/healthz`` probed every 100 ms (whether or not the last probe
answered, as a load balancer does) while the release page is under that load. An answer slower than ``TIMEOUT`` seconds counts as timed out (a load
balancer's health check would give up), never as a latency.
"""

from __future__ import annotations

import asyncio
import http.client
import os
import shlex
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
MANY = 200
TIMEOUT = 2.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# gunicorn options that say how requests are served; bind, time-out and logging are the bench's.
_SERVING_OPTIONS = ("--workers", "-w", "--worker-class", "-k", "--threads", "--worker-connections")


def gunicorn_options() -> list[str]:
    """The serving options of the compose file's web command (or ``BENCH_GUNICORN_ARGS``)."""
    override = os.environ.get("BENCH_GUNICORN_ARGS")
    if override is not None:
        return shlex.split(override)
    import yaml

    command = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["web"][
        "command"
    ]
    words = shlex.split(command) if isinstance(command, str) else list(command)
    if words[:2] == ["sh", "-c"]:
        words = shlex.split(words[2])
    words = words[words.index("gunicorn") + 1 :]
    options = []
    for i, word in enumerate(words):
        name = word.split("=", 1)[0]
        if name in _SERVING_OPTIONS:
            options += [word] if "=" in word else [word, words[i + 1]]
    return options


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
            *gunicorn_options(),
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

    threads = [threading.Thread(target=client) for _ in range(CONNECTIONS)]
    # The probe from a process of its own: a thread beside the 16 clients would measure this
    # process's own contention for its interpreter lock as much as the server's answer.
    prober = _start_prober(port, probe, seconds) if probe else None
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    if prober is not None:
        out, _ = prober.communicate(timeout=seconds + 60)
        probe_latencies = [float(x) for x in out.split()]

    return {
        "rps": len(latencies) / elapsed,
        "p99": _p99(latencies),
        "errors": errors[0],
        "probe_p99": _p99(probe_latencies),
    }


_PROBER = """
import http.client, sys, time
port, path, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
stop = time.monotonic() + seconds
while time.monotonic() < stop:
    began = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path, headers={"Host": "127.0.0.1"})
        response = conn.getresponse()
        response.read()
        ok = response.status in (200, 503)
    except OSError:
        ok = False
    finally:
        conn.close()
    print(time.perf_counter() - began if ok else "inf", flush=True)
    time.sleep(0.1)
"""


def _start_prober(port: int, path: str, seconds: float) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", _PROBER, str(port), path, str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )


async def _request(port: int, path: str) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
        )
        await writer.drain()
        head = await reader.readline()
        await reader.read()  # the whole answer, up to the server's close
        return int(head.split()[1]) if head.startswith(b"HTTP/") else 0
    finally:
        writer.close()


async def _flood_async(port: int, path: str, seconds: float, connections: int, probe: str | None):
    answered: list[float] = []
    probes: list[float] = []
    counts = {"timeouts": 0, "errors": 0, "probe_timeouts": 0}
    stop = time.monotonic() + seconds

    async def one(target: str) -> tuple[str, float]:
        started = time.perf_counter()
        try:
            status = await asyncio.wait_for(_request(port, target), TIMEOUT)
        except TimeoutError:
            return "timeout", 0.0
        except OSError:
            return "error", 0.0
        took = time.perf_counter() - started
        return ("ok" if status in (200, 503) else "error"), took

    async def connection():
        while time.monotonic() < stop:
            outcome, took = await one(path)
            if outcome == "ok":
                answered.append(took)
            else:
                counts["timeouts" if outcome == "timeout" else "errors"] += 1

    async def probe_once():
        outcome, took = await one(probe)
        if outcome == "ok":
            probes.append(took)
        else:
            counts["probe_timeouts"] += 1

    async def prober():
        # As a load balancer does: a probe every 100 ms whether or not the last one answered.
        sent = []
        while time.monotonic() < stop:
            sent.append(asyncio.ensure_future(probe_once()))
            await asyncio.sleep(0.1)
        await asyncio.gather(*sent)

    began = time.perf_counter()
    tasks = [connection() for _ in range(connections)] + ([prober()] if probe else [])
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - began
    return {
        "rps": len(answered) / elapsed,
        "p99": _p99(answered),
        "answered": len(answered),
        **counts,
        "probe_p99": _p99(probes),
        "probes": len(probes),
    }


def _p99(values) -> float | None:
    """The 99th percentile in ms; None when nothing was answered (not a latency of 0)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000 if ordered else None


def _share(answered: int, failed: int) -> str:
    total = answered + failed
    return f"{100 * answered / total:.0f} %" if total else "none asked"


def _ms(value: float | None):
    return round(value, 1) if value is not None else "none answered"


def _flood(port: int, path: str, seconds: float, *, probe: str | None = None) -> dict:
    return asyncio.run(_flood_async(port, path, seconds, MANY, probe))


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
                    many = max(seconds, 5.0)
                    results[("many", "page")] = _flood(port, pages["release page"], many)
                    results[("many", "healthz")] = _flood(port, "/healthz", many)
                    results[("many", "probe")] = _flood(
                        port, pages["release page"], many, probe="/healthz"
                    )
            finally:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)
    column = f"page (gunicorn {' '.join(gunicorn_options())}, {CONNECTIONS} connections)"
    for label in pages:
        on, off = results[(label, 3600)], results[(label, 0)]
        rows.append(
            {
                column: label,
                "cached req/s": round(on["rps"], 1),
                "cached p99 (ms)": _ms(on["p99"]),
                "uncached req/s": round(off["rps"], 1),
                "uncached p99 (ms)": _ms(off["p99"]),
                "ratio (req/s)": round(on["rps"] / off["rps"], 2) if off["rps"] else "",
                "errors": on["errors"] + off["errors"],
            }
        )
    probe = results[("healthz", 0)]
    rows.append(
        {
            column: "/healthz while the leaderboard is loaded",
            "cached p99 (ms)": _ms(probe["probe_p99"]),
            "cached req/s": round(probe["rps"], 1),
        }
    )
    page, healthz, probed = (results[("many", k)] for k in ("page", "healthz", "probe"))
    for label, r in (
        (f"release page (cached), {MANY} connections", page),
        (f"/healthz, {MANY} connections", healthz),
    ):
        rows.append(
            {
                column: label,
                "cached req/s": round(r["rps"], 1),
                "cached p99 (ms)": _ms(r["p99"]),
                f"timed out (> {TIMEOUT:g} s)": r["timeouts"],
                "answered": r["answered"],
                "errors": r["errors"],
                f"within {TIMEOUT:g} s": _share(r["answered"], r["timeouts"] + r["errors"]),
            }
        )
    rows.append(
        {
            column: (f"/healthz probed every 100 ms while the release page has {MANY} connections"),
            "cached p99 (ms)": _ms(probed["probe_p99"]),
            f"timed out (> {TIMEOUT:g} s)": probed["probe_timeouts"],
            "answered": probed["probes"],
            f"within {TIMEOUT:g} s": _share(probed["probes"], probed["probe_timeouts"]),
        }
    )
    return rows
