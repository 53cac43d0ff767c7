"""A WSGI app for tests/deploy/test_probe_lane.py: every page takes SLOW seconds, /healthz
answers at once (as the real one does from its cached report)."""

from __future__ import annotations

import time

SLOW = 1.5


def application(environ, start_response):
    if environ["PATH_INFO"] != "/healthz":
        time.sleep(SLOW)
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]
