"""The pooled model clients of a process stay bounded, whatever number of endpoints it meets.

A test process meets hundreds of loopback servers and an operator may try many endpoints: a
pool kept per base URL and timeout without a bound held every one's sockets open (1,180
descriptors in one test worker), beyond what ``select`` accepts.
"""

from __future__ import annotations

import gc
import os
import time

from evolution.llm import remote
from tests.support.fake_openai import FakeOpenAI


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_process_keeps_a_bounded_number_of_clients_and_their_sockets():
    with FakeOpenAI() as server:
        first = remote.http_client(base_url=server.base_url, timeout_s=7.0)
        assert first.get("_stats").status_code == 200
        before = _open_descriptors()
        for i in range(3 * remote.CLIENTS_KEPT):
            client = remote.http_client(base_url=server.base_url, timeout_s=100.0 + i)
            assert client.get("_stats").status_code == 200  # a kept-alive socket per client
            # The same key gives the same pooled client while it is kept.
            assert remote.http_client(base_url=server.base_url, timeout_s=100.0 + i) is client
        del client
        gc.collect()
        mine = [key for key in remote._clients if key[0] == os.getpid()]
        assert len(mine) <= remote.CLIENTS_KEPT
        # The dropped clients' sockets are closed: what stays open is each kept client's socket
        # and the in-process server's end of it (whose threads notice a close shortly after).
        bound = 2 * remote.CLIENTS_KEPT + 2
        deadline = time.monotonic() + 30
        while _open_descriptors() - before > bound and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _open_descriptors() - before <= bound
        # A client used recently is kept; the oldest ones were dropped.
        assert (
            os.getpid(),
            server.base_url,
            100.0 + 3 * remote.CLIENTS_KEPT - 1,
        ) in remote._clients
        assert (os.getpid(), server.base_url, 7.0) not in remote._clients
