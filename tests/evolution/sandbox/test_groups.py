"""Groups: consecutive submissions of one batch judged one after another in one sandbox's
namespaces (judge_many, SANDBOX_GROUP_SIZE), reset between them.

What docs/judge.md's security model promises between two submissions of a group: nothing a
submission's tests leave behind (processes, files in /tmp or /dev/shm, System V shared memory
or semaphores) reaches the next submission; each has its own compile and its own test
processes. What they share (the namespaces themselves, the network namespace every sandbox of
a factory shares anyway) is listed in docs/judge.md."""

from __future__ import annotations

import time

import pytest

from evolution.sandbox import Limits, TestSpec, batch
from evolution.sandbox.batch import JudgeJob, judge_many
from evolution.sandbox.service import SandboxGroup, judge

from .helpers import host_processes_with

LIMITS = Limits(time_s=3.0, memory_mb=256)

# Prints the identity of the sandbox's mount and IPC namespaces: equal within a group.
NAMESPACES = (
    "import os\nprint(os.stat('/proc/self/ns/mnt').st_ino, os.stat('/proc/self/ns/ipc').st_ino)\n"
)


def _stdio(code: str, expected: str = "") -> JudgeJob:
    return JudgeJob(code=code, tests=[TestSpec("", expected)], harness="stdio", limits=LIMITS)


def _identity_jobs(count: int) -> list[JudgeJob]:
    # The expected output is wrong on purpose: the WA detail shows what the program printed.
    return [_stdio(NAMESPACES, "-") for _ in range(count)]


def _printed(result) -> str:
    assert result.verdict == "WA", result
    return result.tests[0].diff


def test_a_group_shares_namespaces_and_group_size_one_does_not(backend):
    grouped = [_printed(r) for r in judge_many(_identity_jobs(4), workers=1, group_size=4)]
    assert len(set(grouped)) == 1
    alone = [_printed(r) for r in judge_many(_identity_jobs(4), workers=1, group_size=1)]
    assert len(set(alone)) == 4


LEAVE_STATE = """
import ctypes, os, subprocess, sys
open('/tmp/left-by-first', 'w').write('x')
open('/dev/shm/left-by-first', 'w').write('x')
libc = ctypes.CDLL(None, use_errno=True)
assert libc.shmget(0x5EED, 4096, 0o1600) >= 0, ctypes.get_errno()
assert libc.semget(0x5EED, 1, 0o1600) >= 0, ctypes.get_errno()
# A daemon: a new session, double fork, outlives the test process.
subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', '{marker}'],
                 start_new_session=True)
print('left')
"""

FIND_STATE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
found = []
for path in ('/tmp/left-by-first', '/dev/shm/left-by-first'):
    if os.path.exists(path):
        found.append(path)
if libc.shmget(0x5EED, 0, 0) >= 0:
    found.append('shm')
if libc.semget(0x5EED, 0, 0) >= 0:
    found.append('sem')
for pid in os.listdir('/proc'):
    if pid.isdigit() and pid != str(os.getpid()) and pid != '1':
        try:
            found.append(open(f'/proc/{pid}/cmdline', 'rb').read().replace(b'\\0', b' ')
                         .decode()[:80])
        except OSError:
            pass
print(found)
"""


def test_nothing_a_submission_leaves_reaches_the_next_one_of_its_group(backend, marker):
    jobs = [
        _stdio(NAMESPACES, "-"),
        _stdio(LEAVE_STATE.replace("{marker}", marker), "left"),
        _stdio(FIND_STATE, "[]"),
        _stdio(NAMESPACES, "-"),
    ]
    results = list(judge_many(jobs, workers=1, group_size=4))
    assert [r.verdict for r in results] == ["WA", "AC", "AC", "WA"], [
        (r.verdict, r.tests[0].diff) for r in results
    ]
    # The same namespaces before and after: the state was there to find, and is gone.
    assert _printed(results[0]) == _printed(results[3])
    # The daemon did not survive on the host either.
    deadline = time.monotonic() + 5
    while host_processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert host_processes_with(marker) == []


def test_groups_give_the_same_verdicts_as_fresh_namespaces_in_job_order(backend):
    fast = "print(int(input()) * 2)"
    function = "def f(x):\n    return x + 1"
    jobs = [
        JudgeJob(code=fast, tests=[TestSpec("2", "4")], harness="stdio", limits=LIMITS),
        JudgeJob(code="print(0)", tests=[TestSpec("3", "6")], harness="stdio", limits=LIMITS),
        JudgeJob(code="def broken(:", tests=[TestSpec("1", "2")], harness="stdio", limits=LIMITS),
        JudgeJob(code=fast, tests=[TestSpec("1", "2")], harness="nonsense", limits=LIMITS),
        JudgeJob(
            code="while True:\n    pass",
            tests=[TestSpec("1", "")],
            harness="stdio",
            limits=Limits(time_s=0.5, memory_mb=256),
        ),
        JudgeJob(
            code="x = bytearray(400 * 1024 * 1024)\nprint(1)",
            tests=[TestSpec("", "1")],
            harness="stdio",
            limits=LIMITS,
        ),
        JudgeJob(
            code=function,
            tests=[TestSpec(str(n), str(n + 1)) for n in range(30)],
            harness="function",
            entry_point="f",
            limits=LIMITS,
        ),
        JudgeJob(
            code=function,
            tests=[TestSpec("1", "2"), TestSpec("2", "4"), TestSpec("3", "4")],
            harness="function",
            entry_point="f",
            limits=LIMITS,
            stop_on_first_failure=True,
        ),
        JudgeJob(
            code="import sys\nsys.exit(3)", tests=[TestSpec("", "")], harness="stdio", limits=LIMITS
        ),
        JudgeJob(code=fast, tests=[TestSpec("21", "42")], harness="stdio", limits=LIMITS),
    ]

    def summary(results):
        return [
            "ValueError" if isinstance(r, ValueError) else (r.verdict, r.passed, len(r.tests))
            for r in results
        ]

    fresh = summary(judge_many(jobs, workers=2, group_size=1))
    assert fresh == [
        ("AC", 1, 1),
        ("WA", 0, 1),
        ("CE", 0, 1),
        "ValueError",
        ("TLE", 0, 1),
        ("MLE", 0, 1),
        ("AC", 30, 30),
        ("WA", 1, 2),
        ("RE", 0, 1),
        ("AC", 1, 1),
    ]
    assert summary(judge_many(jobs, workers=2, group_size=8)) == fresh
    assert summary(judge_many(jobs, workers=1, group_size=10)) == fresh


def test_runs_keep_every_worker_busy_and_never_group_what_must_run_alone():
    def job(tests=1, **kwargs):
        return JudgeJob(
            code="pass", tests=[TestSpec("")] * tests, harness="stdio", limits=LIMITS, **kwargs
        )

    # Full groups while the look-ahead (workers x group size) is full, smaller ones after.
    sizes = [len(run) for run in batch._runs([job() for _ in range(40)], 2, 8)]
    assert sizes == [8, 8, 8, 8, 4, 2, 1, 1]
    # A small batch is spread over the workers rather than put in one group.
    assert [len(r) for r in batch._runs([job() for _ in range(4)], 2, 8)] == [2, 1, 1]
    # Sharded jobs, jobs with a checker and a change of limits break a run.
    mixed = [
        job(),
        job(tests=60),
        job(),
        job(comparison={"checker": "print('AC')"}),
        job(),
        JudgeJob(code="pass", tests=[TestSpec("")], harness="stdio", limits=Limits(time_s=1.0)),
    ]
    assert [len(r) for r in batch._runs(mixed, 1, 8)] == [1, 1, 1, 1, 1, 1]


def test_a_group_whose_last_submission_is_refused_gives_back_no_waiting_sandbox(backend):
    # The first submission tells the runner that another follows; the second is refused by
    # judge() before it reaches the sandbox. The group must not return that waiting sandbox
    # to the pool, where the next caller's job would be served as the group's next one.
    before = list(backend._idle)
    group = SandboxGroup(backend)
    try:
        first = judge(
            NAMESPACES,
            [TestSpec("", "-")],
            harness="stdio",
            limits=LIMITS,
            group=group,
            more=True,
        )
        assert first.verdict == "WA"
        with pytest.raises(ValueError, match="harness"):
            judge("pass", [TestSpec("")], harness="nonsense", limits=LIMITS, group=group)
    finally:
        group.close()
    assert [s for s in backend._idle if s not in before] == []
    # The pool still works for the next caller, in fresh namespaces.
    after = judge(NAMESPACES, [TestSpec("", "-")], harness="stdio", limits=LIMITS)
    assert after.verdict == "WA" and after.tests[0].diff != first.tests[0].diff


def test_a_problem_with_a_checker_is_never_judged_in_a_group(backend):
    group = SandboxGroup(backend)
    try:
        with pytest.raises(ValueError, match="checker"):
            judge(
                "print(1)",
                [TestSpec("", "1")],
                harness="stdio",
                limits=LIMITS,
                comparison={"checker": "print('AC')"},
                group=group,
            )
    finally:
        group.close()
