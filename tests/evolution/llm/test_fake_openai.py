"""The loopback server itself: its process mode and counters, which other tests rely on."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from tests.support.fake_openai import FakeOpenAI, Reply

ROOT = Path(__file__).resolve().parents[3]
BODY = {"model": "m", "messages": [{"role": "user", "content": "three words here"}]}


def test_it_answers_like_a_chat_completions_server_with_usage():
    with FakeOpenAI(default_content="two words") as server:
        data = httpx.post(f"{server.base_url}/chat/completions", json=BODY).json()

    assert data["choices"][0]["message"] == {"role": "assistant", "content": "two words"}
    assert data["usage"] == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}


def test_it_serves_role_queues_before_the_responder():
    with FakeOpenAI() as server:
        server.script("judge", [Reply("scripted", 1, 1)])
        server.responder = lambda body, headers: f"responder for {headers['x-benchforge-role']}"
        url = f"{server.base_url}/chat/completions"

        answers = [
            httpx.post(url, json=BODY, headers={"X-BenchForge-Role": role}).json()
            for role in ("judge", "judge", "solver")
        ]

    contents = [a["choices"][0]["message"]["content"] for a in answers]
    assert contents == ["scripted", "responder for judge", "responder for solver"]


def test_it_counts_requests_in_flight():
    with FakeOpenAI(latency=0.3) as server:
        url = f"{server.base_url}/chat/completions"
        threads = [
            threading.Thread(target=httpx.post, args=(url,), kwargs={"json": BODY})
            for _ in range(5)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert server.max_in_flight == 5
        # A request leaves the count just after its answer is written, so a client can see
        # its answer a moment before the server has counted it out.
        deadline = time.monotonic() + 5
        while server.in_flight and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.in_flight == 0
        assert server.request_count == 5


def test_it_runs_as_a_separate_process_with_stats_and_reset():
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fake_openai", "--port=0", "--content=from afar"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        base_url = process.stdout.readline().strip().removeprefix("listening on ")
        answer = httpx.post(f"{base_url}/chat/completions", json=BODY, timeout=10).json()
        stats = httpx.get(f"{base_url}/_stats", timeout=10).json()
        httpx.post(f"{base_url}/_reset", timeout=10)
        after_reset = httpx.get(f"{base_url}/_stats", timeout=10).json()
    finally:
        process.terminate()
        process.wait(timeout=10)

    assert answer["choices"][0]["message"]["content"] == "from afar"
    assert stats == {"requests": 1, "in_flight": 0, "max_in_flight": 1}
    assert after_reset["requests"] == 0
