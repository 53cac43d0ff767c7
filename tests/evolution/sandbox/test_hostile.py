"""Hostile programs, each run through the real default backend (bwrap).

Every case checks three things: the attack is contained (what it tried did not happen, seen
from the host), the verdict is not AC where an honest judge would refuse it, and nothing the
program started is left running on the host.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from evolution.sandbox import Limits, TestSpec, cgroups, judge, run_batch

from .helpers import host_processes_with

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True, params=["fast", "fork"])
def isolation(request, settings):
    """Every attack runs in both ways tests can share a sandbox (docs/judge.md)."""
    settings.SANDBOX_ISOLATION = request.param
    return request.param


def run_hostile(backend, code, inputs=("",), limits=None):
    inputs = list(inputs)
    if settings.SANDBOX_ISOLATION == "fast" and len(inputs) == 1:
        # A lone test runs in a forked process whatever the mode (the worker interpreter only
        # pays off for several): the attack runs twice, so that it meets the fast path's worker.
        inputs *= 2
    return run_batch(
        textwrap.dedent(code),
        inputs,
        harness="stdio",
        limits=limits or Limits(time_s=2.0, memory_mb=256),
        backend=backend,
    )


def test_it_cannot_connect_to_a_listener_on_the_host_loopback(backend):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    code = f"""
        import socket
        s = socket.create_connection(("127.0.0.1", {port}), timeout=1)
        s.sendall(b"escaped")
        print("connected")
    """
    try:
        result = judge(
            textwrap.dedent(code),
            [TestSpec("", "connected")],
            harness="stdio",
            limits=Limits(time_s=3.0),
            backend=backend,
        )
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()
    assert result.verdict == "RE"
    assert "connected" not in result.tests[0].diff.splitlines()[0]


def test_it_cannot_read_canary_files_outside_scratch(backend, tmp_path):
    secret = "canary-" + uuid.uuid4().hex
    outside = Path("/tmp") / f"bf-canary-{uuid.uuid4().hex}.txt"
    in_project = Path(settings.BASE_DIR) / f".bf-canary-{uuid.uuid4().hex}.txt"
    outside.write_text(secret)
    in_project.write_text(secret)
    try:
        code = f"""
            import os
            found = []
            for path in {[str(outside), str(in_project), str(Path(settings.BASE_DIR) / "benchapp" / "settings.py"), "/etc/passwd", "/root"]!r}:
                try:
                    with open(path) as fh:
                        found.append(fh.read())
                except OSError as exc:
                    print("blocked", path, type(exc).__name__)
            print("\\n".join(found))
        """
        outcome = run_hostile(backend, code)[0]
    finally:
        outside.unlink()
        in_project.unlink()
    assert outcome.status == "OK"
    assert secret not in outcome.stdout
    assert "SECRET_KEY" not in outcome.stdout
    assert outcome.stdout.count("blocked") == 5
    # The sandbox's root holds the interpreter and its libraries only.
    listing = run_hostile(backend, "import os; print(sorted(os.listdir('/')))")[0].stdout
    assert listing.strip() == "['bin', 'dev', 'etc', 'lib', 'lib64', 'proc', 'tmp', 'usr']"


def test_it_cannot_write_outside_scratch(backend):
    token = uuid.uuid4().hex
    targets = [
        Path(settings.BASE_DIR) / f"pwned-{token}",
        Path("/usr/lib/python3.11") / f"pwned_{token}.py",
        Path("/etc") / f"pwned-{token}",
        Path("/") / f"pwned-{token}",
        Path("/dev/shm") / f"pwned-{token}",
        Path("/usr") / f"pwned-{token}",
        Path("/dev") / f"pwned-{token}",
    ]
    code = f"""
        import os
        for path in {[str(t) for t in targets]!r}:
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as fh:
                    fh.write("x")
                print("wrote", path)
            except OSError as exc:
                print("blocked", path, type(exc).__name__)
        with open("scratch-file", "w") as fh:
            fh.write("fine")
        print("scratch ok")
    """
    outcome = run_hostile(backend, code)[0]
    for target in targets:
        assert not target.exists(), target
    # Outside its scratch the sandbox's own filesystem is read-only too, except /dev/shm and
    # /tmp (tmpfs of its own): nothing there outlives the submission. (A checkout under /tmp,
    # as a CI clone may be, is therefore "writable" inside the sandbox, in its private /tmp.)
    private = ("/dev/shm/", "/tmp/")
    blocked = {
        line.split()[1] for line in outcome.stdout.splitlines() if line.startswith("blocked")
    }
    assert blocked == {str(t) for t in targets if not str(t).startswith(private)}
    assert "scratch ok" in outcome.stdout


def test_a_fork_bomb_is_contained_and_leaves_nothing_behind(backend, marker):
    code = f"""
        import ctypes, os
        ctypes.CDLL(None).prctl(15, b"{marker[:15]}", 0, 0, 0)
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """
    outcomes = run_hostile(backend, code, inputs=["", ""])
    assert [o.status for o in outcomes] == ["TLE", "TLE"]
    assert host_processes_with(marker) == []
    # The host is still able to start sandboxes afterwards.
    after = run_hostile(backend, "print('after')")[0]
    assert after.stdout == "after\n", after


def test_a_memory_bomb_is_mle(backend):
    grab_at_once = "x = bytearray(8 * 1024 ** 3)"
    grab_slowly = "a = []\nwhile True:\n    a.append(bytearray(10 ** 7))"
    results = [
        judge(
            c,
            [TestSpec("", "")],
            harness="stdio",
            limits=Limits(time_s=5.0, memory_mb=128),
            backend=backend,
        )
        for c in (grab_at_once, grab_slowly)
    ]
    assert [r.verdict for r in results] == ["MLE", "MLE"]


def test_an_output_flood_is_ole(backend):
    result = judge(
        "while True:\n    print('y' * 1000)",
        [TestSpec("", "y")],
        harness="stdio",
        limits=Limits(time_s=5.0, max_output_bytes=100_000),
        backend=backend,
    )
    assert result.verdict == "OLE"
    stderr_flood = run_batch(
        "import sys\nwhile True:\n    sys.stderr.write('z' * 1000)",
        [""],
        harness="stdio",
        limits=Limits(time_s=5.0, max_output_bytes=100_000),
        backend=backend,
    )[0]
    assert stderr_flood.status == "OLE"
    assert len(stderr_flood.stderr) < 40_000


def test_an_infinite_loop_and_a_long_sleep_are_tle_at_the_wall_limit(backend):
    limits = Limits(time_s=1.0)
    loop, sleep = (
        run_batch(code, [""], harness="stdio", limits=limits, backend=backend)[0]
        for code in ("while True:\n    pass", "import time\ntime.sleep(100)")
    )
    assert loop.status == sleep.status == "TLE"
    assert 900 <= loop.time_ms < 2500
    assert 900 <= sleep.time_ms < 2500
    assert sleep.cpu_ms < 500  # the wall clock, not CPU, caught the sleeper


def test_a_daemonized_child_does_not_outlive_its_test(backend, marker):
    code = f"""
        import os, sys
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", "{marker}"])
            os._exit(0)
        print("parent done")
    """
    outcomes = run_hostile(backend, code, inputs=["", "", ""])
    assert [o.stdout for o in outcomes] == ["parent done\n"] * 3
    assert host_processes_with(marker) == []
    # The same, with the parent itself running into the wall-clock limit.
    stuck = textwrap.dedent(code) + "import time\ntime.sleep(60)\n"
    outcomes = run_hostile(backend, stuck, inputs=[""], limits=Limits(time_s=1.0))
    assert outcomes[0].status == "TLE"
    assert host_processes_with(marker) == []


def test_killing_or_signalling_the_parent_does_not_disturb_the_judge(backend):
    attacks = [
        "import os, signal\nos.kill(1, signal.SIGKILL)\nprint('still here')",
        "import os, signal\nos.kill(os.getppid(), signal.SIGTERM)\nprint('still here')",
        "import os, signal\nos.kill(1, signal.SIGSTOP)\nprint('still here')",
        "import os, signal\nos.kill(-1, signal.SIGKILL)\nprint('unreachable')",
    ]
    for attack in attacks:
        result = judge(
            attack + "\nimport sys\nprint(sys.stdin.read().strip())",
            [TestSpec("one", "still here\none"), TestSpec("two", "still here\ntwo")],
            harness="stdio",
            limits=Limits(time_s=2.0),
            backend=backend,
        )
        if "unreachable" in attack:
            # kill(-1) reaches the attacker itself; the runner survives and judges test 2.
            assert [t.verdict for t in result.tests] == ["RE", "RE"]
        else:
            assert result.verdict == "AC", (attack, result.to_dict())


def test_it_cannot_read_host_environment_variables(backend, monkeypatch):
    secret = "env-secret-" + uuid.uuid4().hex
    monkeypatch.setenv("BF_HOST_SECRET", secret)
    monkeypatch.setenv("SECRET_KEY", secret + "-key")
    code = """
        import os
        print(dict(os.environ))
        for path in ("/proc/self/environ", "/proc/1/environ"):
            try:
                print(open(path, "rb").read())
            except OSError as exc:
                print("blocked", path, type(exc).__name__)
    """
    outcome = run_hostile(backend, code)[0]
    assert secret not in outcome.stdout
    assert "DATABASE_URL" not in outcome.stdout
    environment = eval(outcome.stdout.splitlines()[0])  # noqa: S307 - our own repr of a dict
    assert set(environment) <= {"PATH", "HOME", "LANG", "LC_CTYPE", "PWD"}
    # The runner (PID 1) stays non-dumpable: its /proc files are out of a test's reach, also
    # after it forked the test dumpable (run_one).
    assert "blocked /proc/1/environ PermissionError" in outcome.stdout, outcome.stdout


def test_it_sees_only_its_own_processes_in_proc(backend):
    code = """
        import os
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        print(pids)
        for pid in pids:
            try:
                print(pid, open(f"/proc/{pid}/cmdline", "rb").read()[:60])
            except OSError as exc:
                print(pid, type(exc).__name__)
    """
    outcome = run_hostile(backend, code)[0]
    pids = eval(outcome.stdout.splitlines()[0])  # noqa: S307
    assert pids[0] == 1 and len(pids) <= 3
    assert str(os.getpid()) not in outcome.stdout.splitlines()[0]
    assert "pytest" not in outcome.stdout


def test_deep_recursion_is_a_runtime_error_and_the_runner_survives(backend):
    plain = "def f(n):\n    return f(n + 1)\nf(0)"
    unbounded = (
        "import sys\nsys.setrecursionlimit(10 ** 8)\ndef f(n):\n    return f(n + 1) + 1\nf(0)"
    )
    outcomes = run_batch(
        plain, [""], harness="stdio", limits=Limits(time_s=5.0, memory_mb=256), backend=backend
    ) + run_batch(
        unbounded,
        ["", ""],
        harness="stdio",
        limits=Limits(time_s=5.0, memory_mb=256),
        backend=backend,
    )
    assert outcomes[0].status == "RE" and "RecursionError" in outcomes[0].stderr
    # Unbounded recursion ends by a crash, a memory error or the clock, never by hurting the judge:
    # the second test still runs.
    assert [o.status in ("RE", "MLE", "TLE") for o in outcomes[1:]] == [True, True]


def test_ctypes_calls_into_libc_are_contained(backend):
    code = """
        import ctypes, socket
        libc = ctypes.CDLL(None, use_errno=True)
        results = {
            "unshare_user": libc.unshare(0x10000000),
            "mount": libc.mount(b"none", b"/tmp", b"tmpfs", 0, None),
            "ptrace_attach_1": libc.ptrace(16, 1, None, None),
            "setuid_0": libc.setuid(0),
            "socket_inet": libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0),
            "system": libc.system(b"id > /tmp/x"),
            "chroot": libc.chroot(b"/tmp"),
        }
        print(results)
    """
    outcome = run_hostile(backend, code)[0]
    assert outcome.status == "OK", outcome.stderr
    results = eval(outcome.stdout)  # noqa: S307
    assert results.pop("system") != 0
    assert all(value == -1 for value in results.values()), results


def test_each_submission_gets_fresh_namespaces_and_scratch(backend):
    # Submissions share a warm factory (the pool) but never its state: scratch files, shared
    # memory files, SysV segments and processes of one are gone for the next.
    leave_traces = """
        import ctypes, os, subprocess, sys
        open("/tmp/left-behind", "w").write("x")
        open("/dev/shm/left-behind", "w").write("x")
        libc = ctypes.CDLL(None)
        print("shmget", libc.shmget(0x5EED, 4096, 0o1666))
        print("pid", os.getpid(), "uid", os.getuid())
    """
    look = """
        import ctypes, os
        print(os.path.exists("/tmp/left-behind"), os.path.exists("/dev/shm/left-behind"))
        print(ctypes.CDLL(None).shmget(0x5EED, 4096, 0o666))
        # Only this submission's runner (PID 1) and this test process itself.
        print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit()) == [1, os.getpid()])
        try:
            open("/dev/planted", "w")
            print("dev writable")
        except OSError:
            print("dev read-only")
    """
    first = run_hostile(backend, leave_traces)[0]
    assert first.status == "OK", first.stderr
    assert "uid 65534" in first.stdout
    second = run_hostile(backend, look)[0]
    lines = second.stdout.splitlines()
    assert lines[0] == "False False"
    assert lines[1] == "-1"  # the SysV segment died with the first submission's namespace
    assert lines[2] == "True"
    assert lines[3] == "dev read-only"


def test_processes_together_cannot_exceed_the_sandbox_memory(backend):
    # Each child stays under its own address-space limit; together they exceed the sandbox's
    # cgroup limit (memory_mb + runner overhead), so the kernel kills children, not the runner.
    code = """
        import os, time
        kids = []
        for _ in range(6):
            pid = os.fork()
            if pid == 0:
                block = bytearray(200 * 1024 * 1024)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                time.sleep(3)
                os._exit(0)
            kids.append(pid)
        print([os.waitstatus_to_exitcode(os.waitpid(k, 0)[1]) for k in kids])
    """
    outcome = run_hostile(backend, code, limits=Limits(time_s=20.0, memory_mb=256))[0]
    assert outcome.status == "OK", outcome.stderr
    statuses = eval(outcome.stdout)  # noqa: S307
    if cgroups.available():
        assert statuses.count(-9) >= 4  # at most one 200 MB child fits beside the others
    else:  # pragma: no cover - hosts without a writable cgroup hierarchy
        assert statuses == [0] * 6
    # The runner survived and serves the next submission.
    assert run_hostile(backend, "print('next')")[0].stdout == "next\n"


def _assert_all_gone(pids: list[int], cgroup_dirs: list[str], within_s: float = 15) -> None:
    """Every process of ``pids`` and every cgroup directory is gone within ``within_s``."""
    deadline = time.monotonic() + within_s
    while True:
        alive = [p for p in pids if Path(f"/proc/{p}").exists()]
        left = [c for c in cgroup_dirs if Path(c).exists()]
        if (not alive and not left) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert alive == [] and left == []


def test_a_killed_judge_leaves_no_sandbox_or_cgroup_behind(tmp_path):
    # A worker killed with SIGKILL mid-submission: bwrap dies with it (--die-with-parent) and the
    # janitor removes its cgroups.
    script = tmp_path / "judge_then_hang.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import json, sys, time
            from django.conf import settings
            settings.configure(SANDBOX_PYTHON={settings.SANDBOX_PYTHON!r}, SANDBOX_MAX_PARALLEL=1)
            from evolution.sandbox.backends.bwrap import BwrapBackend
            from evolution.sandbox import Limits
            session = BwrapBackend().open(limits=Limits()).session
            print(json.dumps({{"pids": session.tree_pids(),
                               "cgroups": [str(p) for _, p in session.cgroups.dirs]}}), flush=True)
            time.sleep(60)
            """
        )
    )
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        cwd=settings.BASE_DIR,
        text=True,
    )
    try:
        state = json.loads(proc.stdout.readline())
    finally:
        proc.kill()
        proc.wait()
    assert state["pids"]
    _assert_all_gone(state["pids"], state["cgroups"])
    assert len(state["cgroups"]) == len(cgroups.available())


def test_a_judge_that_exits_leaves_no_sandbox_or_cgroup_behind(tmp_path):
    # At exit the pool's factories are killed and not waited for (their teardown would add to
    # every judging command's run): bwrap's --die-with-parent ends them and the janitor removes
    # the cgroups the kernel still held at that moment.
    script = tmp_path / "judge_then_exit.py"
    script.write_text(
        textwrap.dedent(
            """
            import json
            from evolution.sandbox import Limits, TestSpec, judge
            from evolution.sandbox.backends import get_backend
            backend = get_backend("bwrap")
            backend.prewarm(2)
            result = judge("print(input())", [TestSpec("1", "1")], harness="stdio",
                           limits=Limits(), backend=backend)
            sessions = list(backend._idle)
            print(json.dumps({"verdict": result.verdict,
                              "pids": [p for s in sessions for p in s.tree_pids()],
                              "cgroups": [str(p) for s in sessions for _, p in s.cgroups.dirs]}))
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        cwd=settings.BASE_DIR,
        # The judge's own settings, from the environment (no Django: as its command line runs).
        env={**os.environ, "SANDBOX_PYTHON": settings.SANDBOX_PYTHON, "SANDBOX_MAX_PARALLEL": "1"},
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    state = json.loads(done.stdout)
    assert state["verdict"] == "AC" and state["pids"]
    if cgroups.available():
        assert state["cgroups"]
    _assert_all_gone(state["pids"], state["cgroups"])


@pytest.mark.skipif(not cgroups.available(), reason="no writable cgroup hierarchy here")
def test_every_process_of_a_sandbox_is_in_its_cgroups_and_none_is_moved_twice(monkeypatch):
    # The host moves a sandbox's first process into its cgroups as soon as it is spawned (what
    # bwrap forks after that is born inside), and the rest of the tree once it is ready, before
    # the factory may fork: every process is inside, and a process already inside is not moved
    # again (each move can cost the kernel a grace period).
    from evolution.sandbox.backends.bwrap import BwrapBackend

    backend = BwrapBackend()
    lease = backend.open(limits=Limits())
    try:
        session = lease.session
        pids = session.tree_pids()
        assert len(pids) >= 2  # bwrap and the factory's interpreter at least
        assert all(session.cgroups._missing(pid) == set() for pid in pids)
        writes = []
        monkeypatch.setattr(cgroups, "_write", lambda path, value: writes.append(path))
        for pid in pids:
            session.cgroups.add(pid)
        assert writes == []
        outside = subprocess.Popen(["sleep", "5"])
        try:
            session.cgroups.add(outside.pid)
            assert sorted(writes) == sorted(
                f"{path}/cgroup.procs" for _, path in session.cgroups.dirs
            )
        finally:
            outside.kill()
            outside.wait()
    finally:
        lease.close()
        backend.shutdown()
