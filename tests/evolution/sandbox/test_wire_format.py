"""The fast path's outcome rows cross a process boundary: the runner (inside the sandbox, which
imports nothing of the project) writes them and service.py (the host) reads them, both in the
columns of the one protocol module, evolution/sandbox/inside/protocol.py."""

from __future__ import annotations

import pytest

from evolution.sandbox import service
from evolution.sandbox.inside import protocol


def test_the_host_reads_outcome_rows_in_the_columns_the_runner_writes():
    assert service.OUTCOME_FIELDS is protocol.OUTCOME_FIELDS
    assert len(set(service.OUTCOME_FIELDS)) == len(service.OUTCOME_FIELDS)


def test_rows_and_single_frames_become_the_same_outcomes():
    row = ["RE", "out", "err", 1.5, 0.5, 2048, 1, 9, False]
    frame = {"i": 7, **dict(zip(service.OUTCOME_FIELDS, row, strict=True))}
    (fast,) = service._outcomes_in({"i": 7, "outcomes": [row]})
    (fork,) = service._outcomes_in(frame)
    assert fast == fork == (7, service.RunOutcome("RE", "out", "err", 1.5, 1, 0.5, 2048, 9))
    # A fork-mode frame may leave fields out: the outcome's defaults stand for them.
    (_, bare) = service._outcomes_in({"i": 0, "status": "OK"})[0]
    assert bare == service.RunOutcome("OK")


def test_a_test_process_the_sandbox_could_not_set_up_is_a_sandbox_error():
    row = ["RE", "", "Traceback ...", 0.0, 0.0, None, 70, 0, True]
    frame = {"i": 0, **dict(zip(service.OUTCOME_FIELDS, row, strict=True))}
    ((_, fast),) = service._outcomes_in({"i": 0, "outcomes": [row]})
    ((_, fork),) = service._outcomes_in(frame)
    assert fast == fork
    assert (fast.status, fast.stderr) == ("SE", "the sandbox failed to set up the test process")


def test_a_malformed_outcome_row_is_refused():
    with pytest.raises(service.SandboxError, match="malformed outcome row"):
        service._outcomes_in({"i": 0, "outcomes": [["OK", "", ""]]})


ECHO = r"""
import json, os, struct, sys, time
def send(obj):
    data = json.dumps(obj).encode()
    os.write(1, struct.pack(">I", len(data)) + data)
send({"ready": True})
time.sleep(0.5)  # the host meanwhile fills the pipe and queues more behind it
stream = os.fdopen(0, "rb")
while True:
    head = stream.read(4)
    if len(head) < 4:
        break
    frame = json.loads(stream.read(struct.unpack(">I", head)[0]))
    send({"n": frame["n"], "size": len(frame.get("pad", ""))})
    if frame.get("last"):
        break
"""


def test_frames_reach_the_runner_whole_and_in_order_past_a_full_pipe():
    # Frames go straight to the pipe when it takes them whole, and through the writer thread
    # when it does not: a small frame sent while a large one still waits for the reader must
    # not overtake it, and nothing is cut.
    import sys

    from evolution.sandbox.backends.base import ProcessSession

    session = ProcessSession(
        [sys.executable, "-I", "-S", "-c", ECHO], popen_kwargs={"close_fds": True}
    )
    try:
        session.send({"n": 0})  # fits: written directly
        session.send({"n": 1, "pad": "x" * 3_000_000})  # far beyond a pipe's 64 KiB
        session.send_many([{"n": 2}, {"n": 3, "pad": "y" * 70_000}])
        session.send({"n": 4, "last": True})
        got = [session.recv(timeout=30) for _ in range(5)]
        assert got == [
            {"n": 0, "size": 0},
            {"n": 1, "size": 3_000_000},
            {"n": 2, "size": 0},
            {"n": 3, "size": 70_000},
            {"n": 4, "size": 0},
        ]
    finally:
        session.close()


def test_a_runner_gets_sandbox_start_seconds_to_announce_itself(settings):
    """A new sandbox's runner has SANDBOX_START_SECONDS to say it is ready (30 s was too
    little on a machine at load 10); one still silent then is a sandbox failure naming the
    wait. Here a runner that announces itself after 2 s starts under a 6 s setting and fails
    under a 1 s one."""
    import sys

    from evolution.sandbox.backends.base import ProcessSession
    from evolution.sandbox.types import SandboxError

    late = (
        "import struct, sys, time, json\n"
        "time.sleep(2)\n"
        "data = json.dumps({'ready': True}).encode()\n"
        "sys.stdout.buffer.write(struct.pack('>I', len(data)) + data)\n"
        "sys.stdout.buffer.flush()\n"
        "time.sleep(30)\n"
    )
    argv = [sys.executable, "-I", "-S", "-c", late]
    settings.SANDBOX_START_SECONDS = 6
    session = ProcessSession(argv, popen_kwargs={"close_fds": True})
    try:
        assert session.info == {"ready": True}
    finally:
        session.close()
    settings.SANDBOX_START_SECONDS = 1
    with pytest.raises(SandboxError, match=r"did not answer within 1\.0 s"):
        ProcessSession(argv, popen_kwargs={"close_fds": True})
