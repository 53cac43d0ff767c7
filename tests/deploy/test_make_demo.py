"""The README's first command, run for real: ``make demo`` on an empty data directory migrates
an embedded SQLite database, builds every demo campaign, prints the logins, serves, and the
printed admin login works; stopping it (SIGTERM) stops its server and its worker."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
def test_make_demo_builds_serves_and_its_printed_admin_login_works(tmp_path):
    port = _free_port()
    # What a newcomer's shell has: none of the test run's database or broker settings.
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "BROKER_KIND", "DEBUG", "BENCHFORGE_DATA_DIR"}
    }
    proc = subprocess.Popen(
        ["make", "demo", f"DEMO_DIR={tmp_path / 'demo'}", f"DEMO_PORT={port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while True:
            assert proc.poll() is None, "".join(lines)[-4000:]
            assert time.monotonic() < deadline, "".join(lines)[-4000:]
            try:
                if httpx.get(f"{base}/accounts/login/", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(1)
        text = "".join(lines)
        assert (tmp_path / "demo" / "benchforge.sqlite3").exists()
        assert "Demo data ready" in text
        password = re.search(r"demo-admin\s+password: (\S+)", text).group(1)
        with httpx.Client(base_url=base, timeout=30) as client:
            page = client.get("/accounts/login/")
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
            answer = client.post(
                "/accounts/login/",
                data={"username": "demo-admin", "password": password, "csrfmiddlewaretoken": token},
                headers={"Referer": f"{base}/accounts/login/"},
            )
            assert answer.status_code == 302, answer.text[:2000]
            home = client.get("/")
            assert home.status_code == 200 and "demo-admin" in home.text
    finally:
        # Stopped as a service manager stops it (SIGTERM to the group). Not SIGINT: a run started
        # in the background by a non-interactive shell (CI) inherits SIGINT ignored, and so
        # would every process of the demo.
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        finally:
            deadline = time.monotonic() + 30
            while _group_alive(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.5)
            left = _group_alive(proc.pid)
            if left:
                os.killpg(proc.pid, signal.SIGKILL)
    assert not left, "the demo's server or worker kept running after SIGTERM"
