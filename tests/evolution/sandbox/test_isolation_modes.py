"""The two ways the tests of one submission share a sandbox: "fast" (one interpreter, state
reset between tests) and "fork" (one process per test), through the real bwrap backend."""

from __future__ import annotations

import os
import signal
import textwrap
import time

import pytest

from evolution.sandbox import Limits, TestSpec, judge, run_batch

LIMITS = Limits(time_s=3.0, memory_mb=256)


def _run(backend, code, inputs, *, isolation, harness="stdio", limits=LIMITS):
    return run_batch(
        textwrap.dedent(code),
        list(inputs),
        harness=harness,
        limits=limits,
        backend=backend,
        isolation=isolation,
    )


# Each test prints what earlier tests of the same submission may have left, then leaves it.
LEAVE_STATE = """
    import builtins, math, os, signal, sys
    print("pid", os.getpid())
    print("global", globals().get("LEFT"))
    print("recursion", sys.getrecursionlimit())
    print("scratch", sorted(os.listdir(".")), os.path.exists("/tmp/left.txt"))
    print("builtin", hasattr(builtins, "planted"), "math.sqrt", math.sqrt(4))
    print("module", "calendar" in sys.modules, "env", os.environ.get("PLANTED"))
    print("cwd", os.getcwd(), "signal", signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL)
    print("argv", sys.argv)
    LEFT = "from an earlier test"
    sys.setrecursionlimit(123)
    open("left.txt", "w").write("x")
    os.makedirs("sub/dir")
    builtins.planted = True
    math.sqrt = lambda x: -1
    import calendar
    os.environ["PLANTED"] = "1"
    os.mkdir("/tmp/elsewhere")
    os.chdir("/tmp/elsewhere")
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    sys.argv.append("extra")
"""


def _lines(outcome) -> dict:
    return {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in outcome.stdout.splitlines()}


def test_fast_mode_runs_every_test_in_one_process_and_nothing_a_test_leaves_reaches_the_next(
    backend,
):
    outcomes = _run(backend, LEAVE_STATE, ["", "", ""], isolation="fast")
    assert [o.status for o in outcomes] == ["OK"] * 3, [o.stderr for o in outcomes]
    seen = [_lines(o) for o in outcomes]
    # One interpreter served all three tests (this is the fast path, not a fork per test)...
    assert len({s["pid"] for s in seen}) == 1
    # ...yet each test starts as the first one did.
    for state in seen:
        assert state["global"] == "None"
        assert state["recursion"] == "50000"  # LiveCodeBench's prelude value, every test
        assert state["scratch"] == "[] False"
        assert state["builtin"] == "False math.sqrt 2.0"
        assert state["module"] == "False env None"
        assert state["cwd"] == "/tmp signal True"
        assert state["argv"] == "['solution.py']"


# What the fast path keeps between tests when nothing changed it (the prelude's names, the
# standard stream objects, signal handlers watched where they are set), changed by each test.
LEAVE_SHARED = """
    import _signal, os, signal, sys
    print("pid", os.getpid())
    print("gcd", gcd(12, 18), "inf", inf)
    print("stdout", sys.stdout.line_buffering, getattr(sys.stdout, "planted", None))
    print("input", input(), sys.stdin.read().split())
    print("usr2", signal.getsignal(signal.SIGUSR2) == signal.SIG_DFL)
    __builtins__.gcd = lambda a, b: -1
    __builtins__.inf = 0
    sys.stdout.reconfigure(line_buffering=True)
    sys.stdout.planted = True
    _signal.signal(_signal.SIGUSR2, _signal.SIG_IGN)
"""


def test_fast_mode_puts_back_what_its_shortcuts_share(backend):
    outcomes = _run(backend, LEAVE_SHARED, ["a\nb c", "d\ne", "f"], isolation="fast")
    assert [o.status for o in outcomes] == ["OK"] * 3, [o.stderr for o in outcomes]
    seen = [_lines(o) for o in outcomes]
    assert len({s["pid"] for s in seen}) == 1
    for state in seen:
        assert state["gcd"] == "6 inf inf"  # the prelude's names, as LiveCodeBench binds them
        assert state["stdout"] == "False None"
        assert state["usr2"] == "True"
    # Each test reads its own input, whatever the previous one left unread.
    assert [s["input"] for s in seen] == ["a ['b', 'c']", "d ['e']", "f []"]


def test_fast_mode_takes_large_inputs_and_more_than_a_pipe_holds(backend):
    # Inputs travel to the worker queued in its command pipe, or, past 256 kB or the output
    # cap (the worker may not write a file that large), through its stdin memfd: 14 inputs of
    # ~180 kB (2.5 MB in all, interleaved with a crash, an output flood and an exception, each
    # of which replaces the worker) and 3 inputs of ~1.3 MB, larger than the 1 MB output cap.
    code = """
        import os, sys
        data = sys.stdin.buffer.read().split()
        kind = int(data[0])
        if kind == 1:
            os._exit(3)
        if kind == 2:
            sys.stdout.write("x" * 3_000_000)
        if kind == 3:
            raise ValueError("boom")
        print(len(data), sum(map(int, data[1:])))
    """
    medium = [f"{k} " + " ".join("7" for _ in range(60_000)) + "\n" for k in (0, 1, 0, 2, 0, 3, 0)]
    large = "0 " + " ".join(str(i) for i in range(200_000)) + "\n"
    outcomes = _run(backend, code, medium * 2 + [large] * 3, isolation="fast")
    statuses = [o.status for o in outcomes]
    assert statuses == ["OK", "RE", "OK", "OLE", "OK", "RE", "OK"] * 2 + ["OK"] * 3, statuses
    assert {o.stdout for o in outcomes if o.status == "OK"} == {
        "60001 420000\n",
        f"200001 {sum(range(200_000))}\n",
    }


def test_fork_mode_runs_each_test_in_its_own_process_with_the_same_fresh_state(backend):
    outcomes = _run(backend, LEAVE_STATE, ["", "", ""], isolation="fork")
    seen = [_lines(o) for o in outcomes]
    assert len({s["pid"] for s in seen}) == 3
    assert all(s["global"] == "None" and s["scratch"] == "[] False" for s in seen)
    assert all(s["builtin"] == "False math.sqrt 2.0" for s in seen)


def test_fast_mode_restores_the_recursion_limit_for_the_assert_harness(backend):
    code = "import sys\ndef f(x):\n    return x"
    check = (
        "import sys\n"
        "def check(candidate):\n"
        "    print(sys.getrecursionlimit())\n"
        "    sys.setrecursionlimit(77)\n"
    )
    outcomes = run_batch(
        code,
        [check, check],
        harness="assert",
        entry_point="f",
        limits=LIMITS,
        backend=backend,
        isolation="fast",
    )
    assert outcomes[0].stdout == outcomes[1].stdout
    assert outcomes[1].stdout.strip() != "77"


def test_fast_mode_replaces_the_interpreter_after_a_leftover_thread_or_open_file(backend):
    code = """
        import os, sys, threading, time
        print(os.getpid(), threading.active_count(), sorted(os.listdir("/proc/self/fd")))
        if input() == "thread":
            threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
        else:
            kept = open("kept.txt", "w")
            kept.write("secret")
            kept.flush()
            sys.modules["__main__"].keep = kept
    """
    outcomes = _run(backend, code, ["thread", "file", "x"], isolation="fast")
    assert [o.status for o in outcomes] == ["OK"] * 3
    pids = [o.stdout.split()[0] for o in outcomes]
    assert len(set(pids)) == 3  # each leftover retired the interpreter that held it
    # Each test saw one thread and only the descriptors the judge gives every test: 0-5, the
    # worker's own two (6: its children file, 7: /proc/self/fd) and the listing's own (8).
    fresh = ["1", "['0', '1', '2', '3', '4', '5', '6', '7', '8']"]
    assert [o.stdout.strip().split(None, 2)[1:] for o in outcomes] == [fresh] * 3


def test_fast_mode_survives_crashes_timeouts_and_exits_of_a_test(backend):
    code = """
        import os, sys, time
        what = input()
        if what == "exit":
            os._exit(3)
        if what == "sysexit":
            sys.exit(4)
        if what == "spin":
            while True:
                pass
        if what == "raise":
            raise ValueError("boom")
        if what == "memory":
            block = bytearray(10 ** 10)
        if what == "fork":
            if os.fork() == 0:
                time.sleep(30)
        print("fine", what)
    """
    inputs = ["exit", "ok1", "sysexit", "spin", "ok2", "raise", "memory", "fork", "ok3"]
    outcomes = _run(backend, code, inputs, isolation="fast", limits=Limits(time_s=1.5))
    statuses = [o.status for o in outcomes]
    assert statuses == ["RE", "OK", "RE", "TLE", "OK", "RE", "MLE", "OK", "OK"], statuses
    assert [o.exit_code for o in outcomes[:3]] == [3, 0, 4]
    assert "ValueError: boom" in outcomes[5].stderr
    assert outcomes[8].stdout == "fine ok3\n"


def test_fast_mode_charges_cpu_time_per_test_not_per_interpreter(backend):
    burn = (
        "import time\nend = time.process_time() + 0.2\nwhile time.process_time() < end:\n    pass"
    )
    outcomes = _run(backend, burn, ["", "", ""], isolation="fast")
    assert all(180 <= o.cpu_ms < 600 for o in outcomes), [o.cpu_ms for o in outcomes]


def test_a_problem_chooses_fork_mode_through_its_comparison_settings(backend):
    # re's pattern cache is one of the things the fast path shares between the tests of a
    # submission (docs/judge.md): a second test in the same worker finds the first one's
    # pattern there; a fork per test never does.
    code = (
        "import re\n"
        "print('again' if any('bf-mark' in str(k) for k in re._cache) else 'first')\n"
        "re.compile('bf-mark')"
    )
    tests = [TestSpec("", "first"), TestSpec("", "first")]

    def verdicts(comparison):
        result = judge(
            code, tests, harness="stdio", limits=LIMITS, backend=backend, comparison=comparison
        )
        return [t.verdict for t in result.tests]

    assert verdicts({"isolation": "fork"}) == ["AC", "AC"]
    assert verdicts({"isolation": "fast"}) == ["AC", "WA"]
    with pytest.raises(ValueError, match="isolation must be one of fast, fork"):
        verdicts({"isolation": "threads"})


def test_the_setting_picks_the_mode_when_neither_caller_nor_problem_does(backend, settings):
    code = "import os\nprint(os.getpid())"
    settings.SANDBOX_ISOLATION = "fork"
    forked = _run(backend, code, ["", ""], isolation=None)
    settings.SANDBOX_ISOLATION = "fast"
    shared = _run(backend, code, ["", ""], isolation=None)
    assert len({o.stdout for o in forked}) == 2  # a process per test
    assert len({o.stdout for o in shared}) == 1  # one worker for both


def test_fast_mode_survives_a_test_that_closes_its_standard_input(backend):
    # open(0) wraps descriptor 0; collecting the file object closes it. LiveCodeBench-style
    # solutions do this; the next test must still get its input.
    code = "lines = open(0).read().split()\nprint(int(lines[0]) * 2)"
    outcomes = _run(backend, code, ["1", "2", "3"], isolation="fast")
    assert [(o.status, o.stdout) for o in outcomes] == [("OK", "2\n"), ("OK", "4\n"), ("OK", "6\n")]


def test_a_test_that_closes_the_workers_reply_channel_is_its_own_runtime_error(backend):
    code = "import os\nif input() == 'close':\n    os.close(5)\nprint('ran')"
    outcomes = _run(backend, code, ["close", "fine"], isolation="fast")
    assert [o.status for o in outcomes] == ["RE", "OK"]
    assert outcomes[1].stdout == "ran\n"


@pytest.mark.parametrize("isolation", ["fast", "fork"])
def test_a_program_that_works_in_a_thread_is_waited_for(backend, isolation):
    # The competitive-programming idiom for a deeper stack: main() runs in a new thread.
    code = """
        import sys, threading
        def main():
            print(int(input()) * 2)
        sys.setrecursionlimit(10 ** 6)
        threading.stack_size(1 << 26)
        threading.Thread(target=main).start()
    """
    outcomes = _run(backend, code, ["1", "2", "3"], isolation=isolation)
    assert [(o.status, o.stdout) for o in outcomes] == [("OK", "2\n"), ("OK", "4\n"), ("OK", "6\n")]


def test_fast_mode_stops_at_the_first_failure_with_tests_in_flight(backend):
    # Under a stop condition the fast path keeps several tests in flight; a failure the runner
    # sees itself (RE, TLE) ends the submission there, and the sandbox stays reusable.
    code = (
        "import time\nn = int(input())\n"
        "if n == 7:\n    raise ValueError(n)\n"
        "if n == 30:\n    time.sleep(60)\n"
        "print(n)"
    )
    limits = Limits(time_s=1.5, memory_mb=256)

    def run(numbers):
        started = time.monotonic()
        result = judge(
            code,
            [TestSpec(str(n), str(n)) for n in numbers],
            harness="stdio",
            limits=limits,
            backend=backend,
            stop_on_first_failure=True,
            isolation="fast",
        )
        return [t.verdict for t in result.tests], time.monotonic() - started

    verdicts, _ = run(range(20))
    assert verdicts == ["AC"] * 7 + ["RE"]
    verdicts, took = run([0, 1, 2, 30, 31, 32, 33, 34, 35, 36])
    assert verdicts == ["AC", "AC", "AC", "TLE"]
    assert took < 1.5 * 3  # one time limit, not one per test still queued
    assert backend._idle, "the sandbox went back to the pool"
    assert run([1, 2])[0] == ["AC", "AC"]


# --- the worker forked ahead for the next submission (inside/fast.py, FastWorker.prefork) ----------

PID = "import os\nprint(os.getpid())"


def _own_factory():
    """A bwrap backend of this test's own: its pooled factory serves only the submissions
    below, one after another, whatever other tests left in the shared pool."""
    from evolution.sandbox.backends.bwrap import BwrapBackend

    return BwrapBackend()


def _waiting_workers(backend) -> list[int]:
    """Host PIDs of the fast-mode workers in the backend's idle factories once each factory has
    settled between two submissions: the last one's processes gone; the runner whose turn has
    come and the one prepared after it, each with the worker forked ahead for it."""
    deadline = time.monotonic() + 20
    while True:
        found, settled = [], True
        for session in backend._idle:
            names = {}
            for pid in session.tree_pids():
                try:
                    with open(f"/proc/{pid}/comm") as comm:
                        names[pid] = comm.read().strip()
                except OSError:
                    continue
            roles = sorted(names.values())
            settled = settled and roles == [
                "bf-factory",
                *["bf-middle"] * 2,
                *["bf-runner"] * 2,
                *["bf-worker"] * 2,
                "bwrap",
            ]
            found += [pid for pid, name in names.items() if name == "bf-worker"]
        if settled or time.monotonic() > deadline:
            return found if settled else []
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (not a zombie, not gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _fast_pids(backend, count=3):
    outcomes = _run(backend, PID, [""] * count, isolation="fast")
    assert [o.status for o in outcomes] == ["OK"] * count, [o.stderr for o in outcomes]
    return {o.stdout.strip() for o in outcomes}


def test_after_a_fast_submission_the_next_ones_worker_is_forked_ahead_and_used():
    # Each submission has a PID namespace of its own whose PID 1 is its runner. A worker forked
    # ahead is the runner's first child (PID 2); one forked when the job arrives comes later.
    # (Its kit must still match the runner's state when the job arrives: a module the runner
    # imported after taking it, once, made every such worker a wasted fork.)
    backend = _own_factory()
    try:
        _fast_pids(backend)  # the factory's first submission: nothing was forked ahead
        _fast_pids(backend)  # the next one was prepared while a fork-mode-less history ran
        assert _waiting_workers(backend), "no worker waits for the next submission"
        assert _fast_pids(backend) == {"2"}
    finally:
        backend.shutdown()


def test_a_worker_killed_while_it_waited_for_its_job_does_not_fail_the_next_submission():
    # The worker forked ahead waits while the submission before runs in the same cgroups, where
    # the kernel may kill it (it is a preferred OOM victim, like every test process). Its death
    # must not be charged to the next submission's first test: a fresh worker runs them all.
    backend = _own_factory()
    try:
        _fast_pids(backend)
        _fast_pids(backend)
        waiting = _waiting_workers(backend)
        assert waiting, "no worker waits for the next submission"
        for pid in waiting:
            os.kill(pid, signal.SIGKILL)
        # Dead before the job comes (a zombie or gone): a kill that lands while the job is
        # being handed over is the first test's death, as any later one would be.
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in waiting) and time.monotonic() < deadline:
            time.sleep(0.01)
        outcomes = _run(backend, "print(input())", ["1", "2", "3"], isolation="fast")
        assert [(o.status, o.stdout) for o in outcomes] == [
            ("OK", "1\n"),
            ("OK", "2\n"),
            ("OK", "3\n"),
        ], [(o.status, o.signal, o.stderr) for o in outcomes]
        assert backend._idle, "the sandbox went back to the pool"
    finally:
        backend.shutdown()


def test_forked_tests_and_grouped_submissions_each_draw_their_own_random_stream(backend):
    # Every test process is forked from one runner that imported random: each child must
    # reseed (the random module does it in every child of os.fork), or all would print the
    # same numbers.
    code = "import random\nprint(random.random(), random.getrandbits(64))"
    outs = [o.stdout for o in _run(backend, code, ["", "", "", ""], isolation="fork")]
    assert len(set(outs)) == 4, outs
    from evolution.sandbox.batch import JudgeJob, judge_many

    jobs = [
        JudgeJob(code=code, tests=[TestSpec("", "-")], harness="stdio", limits=LIMITS)
        for _ in range(4)
    ]
    printed = [r.tests[0].diff for r in judge_many(jobs, workers=1, group_size=4)]
    assert len(set(printed)) == 4, printed


def _start_time(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[19])


def test_a_next_sandbox_that_died_while_it_waited_is_made_again_not_charged_to_its_submission():
    # While a submission runs, its factory prepares the next one's sandbox (a runner in fresh
    # namespaces that waits for its turn). If that runner dies first (a fork bomb next door
    # left it no process to start with, the kernel killed it), the next submission must still
    # get a working sandbox, not a sandbox failure.
    backend = _own_factory()
    try:
        assert _run(backend, "print(input())", ["0"], isolation="fork")[0].stdout == "0\n"
        (session,) = backend._idle
        deadline = time.monotonic() + 20
        runners: dict[int, tuple[int, int]] = {}
        stable = 0
        while time.monotonic() < deadline:
            # Settled: the last submission's runner is gone (not even a zombie), two are left,
            # the same two for 0.3 s (on a busy machine the last runner's exit can take a while,
            # and the runner with the turn must not be mistaken for the one waiting).
            seen: dict[int, int] = {}
            for pid in session.tree_pids():
                try:
                    with open(f"/proc/{pid}/comm") as comm:
                        if comm.read().strip() == "bf-runner" and _alive(pid):
                            seen[pid] = (_start_time(pid), pid)
                except OSError:
                    continue
            stable = stable + 1 if len(seen) == 2 and seen == runners else 0
            if stable >= 6:
                break
            runners = seen
            time.sleep(0.05)
        assert len(runners) == 2, "the factory keeps a runner with the turn and one after it"
        # The one prepared last waits for its turn (start times tie within a clock tick; PIDs
        # are handed out in order).
        waiting = max(runners, key=runners.get)
        os.kill(waiting, signal.SIGKILL)
        while _alive(waiting) and time.monotonic() < deadline:
            time.sleep(0.01)
        outcomes = [
            _run(backend, "print(input())", [str(n)], isolation="fork")[0] for n in (1, 2, 3)
        ]
        assert [(o.status, o.stdout) for o in outcomes] == [
            ("OK", "1\n"),
            ("OK", "2\n"),
            ("OK", "3\n"),
        ], [(o.status, o.stderr) for o in outcomes]
        assert backend._idle == [session], "the same sandbox served them all"
    finally:
        backend.shutdown()


def test_a_test_that_closes_or_replaces_the_workers_own_descriptors_only_retires_it(backend):
    code = """
        import os
        what = input()
        print(os.getpid(), os.readlink("/proc/self/fd/6"), os.readlink("/proc/self/fd/7"))
        if what == "close":
            os.close(6)
            os.close(7)
        elif what == "replace":
            os.dup2(1, 6)
            os.dup2(1, 7)
    """
    outcomes = _run(backend, code, ["close", "x", "replace", "x"], isolation="fast")
    assert [o.status for o in outcomes] == ["OK"] * 4, [o.stderr for o in outcomes]
    pids = [o.stdout.split()[0] for o in outcomes]
    # Each of them retired the worker that ran it; the test after it ran in a fresh one.
    assert pids[0] != pids[1] and pids[2] != pids[3] and pids[1] == pids[2]
    for outcome in outcomes:
        pid, children, counted = outcome.stdout.split()
        assert (counted, children) == (f"/proc/{pid}/fd", f"/proc/{pid}/task/{pid}/children")


def test_fast_mode_clears_timers_and_the_working_directory_however_a_test_set_them(backend):
    # The reset puts the timers and the working directory back only after a test that set
    # them through Python (signal.setitimer/alarm, os.chdir/fchdir, _signal's and posix's
    # own functions), or that changed an imported module: every way must be caught.
    code = """
        import os, signal, sys
        how = input()
        print(os.getpid(), signal.getitimer(signal.ITIMER_REAL)[0] == 0,
              signal.getitimer(signal.ITIMER_VIRTUAL)[0] == 0, os.getcwd())
        os.makedirs("/tmp/away", exist_ok=True)
        if how == "module":
            signal.setitimer(signal.ITIMER_REAL, 50)
            os.chdir("/tmp/away")
        elif how == "private":
            import _signal, posix
            _signal.alarm(50)
            _signal.setitimer(_signal.ITIMER_VIRTUAL, 50)
            away = os.open("/tmp/away", os.O_RDONLY)
            posix.fchdir(away)
            os.close(away)
        elif how == "imported":
            from signal import alarm
            from os import chdir
            alarm(50)
            chdir("/tmp/away")
        elif how == "reimported":
            # A fresh _signal module (its functions are not the wrapped ones): the changed
            # sys.modules makes the reset put everything back.
            del sys.modules["_signal"]
            import _signal
            _signal.setitimer(_signal.ITIMER_REAL, 50)
    """
    ways = ["module", "private", "imported", "reimported"]
    inputs = [way for way in ways for _ in (0, 1)]
    outcomes = _run(backend, code, inputs, isolation="fast")
    assert [o.status for o in outcomes] == ["OK"] * len(inputs), [o.stderr for o in outcomes]
    seen = [o.stdout.split() for o in outcomes]
    assert len({pid for pid, *_ in seen}) == 1, seen  # one worker: reset, not replaced
    assert [rest for _, *rest in seen] == [["True", "True", "/tmp"]] * len(inputs)
