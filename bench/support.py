"""Shared pieces of the benchmarks: a throwaway database and the loopback model server."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def throwaway_database(label: str):
    """Create a fresh migrated database for one benchmark and drop it afterwards, so a
    benchmark never touches real data. Yields the database name."""
    from django.db import connection

    old_name = connection.settings_dict["NAME"]
    test_settings = connection.settings_dict.setdefault("TEST", {})
    previous_test_name = test_settings.get("NAME")
    test_settings["NAME"] = f"bf_bench_{label}_{os.getpid()}"
    name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        yield name
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        if previous_test_name is None:
            test_settings.pop("NAME", None)
        else:
            test_settings["NAME"] = previous_test_name


class LoopbackServer:
    """The loopback OpenAI-compatible server (tests/support/fake_openai.py) as a child process."""

    def __init__(
        self,
        latency_ms: float,
        content: str = "def f(x):\n    return x\n",
        *,
        responder: str = "",
    ):
        """``responder``: ``module:name`` of a responder answering by role and replay key."""
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.support.fake_openai",
                "--port=0",
                f"--latency-ms={latency_ms}",
                f"--content={content}",
                *([f"--responder={responder}"] if responder else []),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline().strip()
        if not line.startswith("listening on "):
            self.process.kill()
            raise RuntimeError(f"loopback server did not start: {line!r}")
        self.base_url = line.removeprefix("listening on ")

    def stats(self) -> dict:
        import httpx

        return httpx.get(f"{self.base_url}/_stats", timeout=5).json()

    def reset(self) -> None:
        import httpx

        httpx.post(f"{self.base_url}/_reset", timeout=5)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def throughput_row(
    label: str, latency_ms: float, calls: int, window: float, max_in_flight: int, width: int
) -> dict:
    """The columns every calls-per-second row shares: what was achieved over the window and,
    with a latency, its ratio to the bound (``width`` calls in flight, each taking the latency)."""
    latency = latency_ms / 1000
    achieved = calls / window if calls and window else 0.0
    row = {
        "kind": label,
        "latency (ms)": latency_ms,
        "calls": calls,
        "window (s)": round(window, 2),
        "calls/s": round(achieved, 1),
        "max in flight": max_in_flight,
    }
    if latency:
        ideal = width / latency
        row.update(
            {"ideal calls/s": ideal, "ratio": round(achieved / ideal, 3), "target": ">= 0.8"}
        )
    return row
