"""The runner (PID 1 of a sandbox) is never open to the code it runs. It is made dumpable for
the instant of a fork (the test process then writes its own /proc files), and the test process
waits for its word that it is non-dumpable again before it runs anything of the submission.
The window used to be open: on a loaded host the forked test could read the runner's
/proc/1/environ before the runner had shut it."""

from __future__ import annotations

import multiprocessing
import os

import pytest

from evolution.sandbox import Limits, run_batch

pytestmark = pytest.mark.slow

TESTS = 1000

# Each test looks at the runner's /proc files at once: the first thing the submission does.
PEEK = """import os
try:
    os.stat("/proc/1/environ")
    with open("/proc/1/environ", "rb") as fh:
        fh.read(1)
    print("read")
except OSError as exc:
    print("blocked", type(exc).__name__)
"""


def _spin(stop):
    while not stop.is_set():
        pass


@pytest.fixture(params=["bwrap", "docker"])
def any_backend(request):
    return request.getfixturevalue("backend" if request.param == "bwrap" else "docker_backend")


def test_no_forked_test_reads_the_runner_even_on_a_busy_host(any_backend, settings):
    settings.SANDBOX_ISOLATION = "fork"
    # Busy host: more runnable processes than cores, so that the runner is often preempted
    # right after a fork (the moment the window was open).
    stop = multiprocessing.Event()
    spinners = [
        multiprocessing.Process(target=_spin, args=(stop,))
        for _ in range(2 * (os.cpu_count() or 1))
    ]
    for spinner in spinners:
        spinner.start()
    try:
        outcomes = run_batch(
            PEEK, [""] * TESTS, harness="stdio", limits=Limits(time_s=5.0), backend=any_backend
        )
    finally:
        stop.set()
        for spinner in spinners:
            spinner.join()
    seen = [o.stdout.strip() for o in outcomes]
    assert all(o.status == "OK" for o in outcomes), {o.status for o in outcomes}
    assert seen.count("read") == 0, f"{seen.count('read')} of {TESTS} tests read the runner"
    assert set(seen) == {"blocked PermissionError"}, set(seen)
