"""A sandbox starts in a process that holds more than 1,024 file descriptors.

The runner's code (~137 KB) is more than a pipe takes at once, so the rest goes through the
session's writer thread, which waited for the pipe with ``select.select``: that refuses any
descriptor from 1,024 on ("filedescriptor out of range"), the thread died, the runner never got
the rest of its code and every new sandbox waited out ``SANDBOX_START_SECONDS``. A long-lived
worker (or a long test run) reaches that many descriptors; late in a ``make test`` run every
sandbox start hung this way."""

from __future__ import annotations

import os
import resource
import time

from evolution.sandbox import Limits, run_batch
from evolution.sandbox.backends.bwrap import BwrapBackend

HELD = 1100


def test_a_sandbox_starts_beside_more_than_a_thousand_open_descriptors(settings):
    settings.SANDBOX_START_SECONDS = 30
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < HELD + 200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, HELD + 200), hard))
    held = []
    try:
        while len(held) < HELD:
            held.append(os.open("/dev/null", os.O_RDONLY))
        assert max(held) >= 1024  # every pipe of the new sandbox is numbered above
        started = time.monotonic()
        (outcome,) = run_batch(
            "print(input())",
            ["ok\n"],
            harness="stdio",
            limits=Limits(time_s=5.0),
            backend=BwrapBackend(),  # a fresh pool: the sandbox is started here
        )
        assert outcome.status == "OK", outcome
        assert outcome.stdout.strip() == "ok"
        assert time.monotonic() - started < 25
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
