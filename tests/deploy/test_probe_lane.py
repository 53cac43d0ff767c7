"""The web command's gunicorn worker (benchapp.serving.ProbeFirstWorker) answers /healthz in a
lane of its own: with every page thread busy and more pages queued, the probe is answered at
once, where gunicorn's own threaded worker queues it behind the pages. Real gunicorn processes
serving a tiny WSGI app whose pages are slow (tests/deploy/probe_app.py)."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from .compose import ROOT, compose_config
from .probe_app import SLOW


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def serve():
    started = []

    def start(worker_class: str) -> int:
        port = _free_port()
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "tests.deploy.probe_app:application",
                f"--bind=127.0.0.1:{port}",
                "--workers=1",
                f"--worker-class={worker_class}",
                "--threads=2",
                "--log-level=warning",
            ],
            cwd=ROOT,
            start_new_session=True,
        )
        started.append(process)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                _get(port, "/healthz")
                return port
            except OSError:
                time.sleep(0.1)
        raise AssertionError("gunicorn did not start")

    yield start
    for process in started:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def _get(port: int, path: str) -> float:
    began = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        assert response.status == 200
    finally:
        conn.close()
    return time.perf_counter() - began


def _probe_while_pages_queue(port: int, *, split: bool = False) -> float:
    """Six slow pages at once on two threads (three rounds of SLOW s queued), then the probe."""
    pages = [threading.Thread(target=_get, args=(port, "/page")) for _ in range(6)]
    for page in pages:
        page.start()
    time.sleep(0.3)  # every page accepted and queued
    try:
        if not split:
            return _get(port, "/healthz")
        # The probe's request line arrives after the connection was accepted.
        began = time.perf_counter()
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            time.sleep(0.2)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert sock.recv(64).startswith(b"HTTP/1.1 200")
        return time.perf_counter() - began - 0.2
    finally:
        for page in pages:
            page.join()


def test_the_web_command_uses_the_probe_lane_worker():
    command = str(compose_config()["services"]["web"]["command"])
    assert "--worker-class benchapp.serving.ProbeFirstWorker" in command
    assert "--threads" in command


@pytest.mark.slow
def test_the_probe_is_answered_at_once_while_pages_queue(serve):
    lane = serve("benchapp.serving.ProbeFirstWorker")
    assert _probe_while_pages_queue(lane) < SLOW / 2
    assert _probe_while_pages_queue(lane, split=True) < SLOW / 2
    # Pages are still served as before, by the page threads.
    assert _get(lane, "/page") >= SLOW

    # gunicorn's own threaded worker: the probe waits behind the queued pages.
    plain = serve("gthread")
    assert _probe_while_pages_queue(plain) >= SLOW
