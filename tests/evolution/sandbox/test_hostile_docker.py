"""The hostile programs of test_hostile.py, run through the docker backend on the real engine
(warm containers, one reused submission after submission), in both isolation modes.

The cases that hold for any backend are test_hostile.py's own, collected here again with the
docker backend as ``backend``. Where a case checks something bwrap-specific (the sandbox's
root holding the interpreter alone, a private /dev/shm, no shell to run, the host cgroups the
backend makes), its docker counterpart is written below. Added: what a warm container must
guarantee, that a submission sees nothing of the one before it in the same container, and
that a container is discarded (not reused) after an OOM kill, a lost runner or MAX_USES jobs.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from evolution.sandbox import Limits, SandboxError, TestSpec, judge
from evolution.sandbox.backends import docker as docker_backend_module

from .helpers import host_processes_with, leased_containers
from .test_hostile import (  # noqa: F401 - collected here with the docker backend
    isolation,
    run_hostile,
    test_a_daemonized_child_does_not_outlive_its_test,
    test_a_fork_bomb_is_contained_and_leaves_nothing_behind,
    test_a_memory_bomb_is_mle,
    test_an_infinite_loop_and_a_long_sleep_are_tle_at_the_wall_limit,
    test_an_output_flood_is_ole,
    test_deep_recursion_is_a_runtime_error_and_the_runner_survives,
    test_it_cannot_connect_to_a_listener_on_the_host_loopback,
    test_it_cannot_read_host_environment_variables,
    test_it_sees_only_its_own_processes_in_proc,
    test_killing_or_signalling_the_parent_does_not_disturb_the_judge,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def backend(docker_backend):
    return docker_backend


def _container_gone(client, container_id: str, within_s: float = 15) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not client.api.containers(all=True, filters={"id": container_id}):
            return True
        time.sleep(0.1)
    return False


def test_it_cannot_read_host_files(backend, docker_client):
    # The container's root is the image's: none of the host's files are in it.
    secret = "canary-" + uuid.uuid4().hex
    outside = Path("/tmp") / f"bf-canary-{uuid.uuid4().hex}.txt"
    in_project = Path(settings.BASE_DIR) / f".bf-canary-{uuid.uuid4().hex}.txt"
    outside.write_text(secret)
    in_project.write_text(secret)
    paths = [
        str(outside),
        str(in_project),
        str(Path(settings.BASE_DIR) / "benchapp" / "settings.py"),
    ]
    try:
        code = f"""
            import os
            for path in {paths + ["/root/.bashrc", "/etc/shadow"]!r}:
                try:
                    with open(path) as fh:
                        print("read", path, fh.read())
                except OSError as exc:
                    print("blocked", path, type(exc).__name__)
            print(sorted(os.listdir("/")))
            print(open("/proc/self/mountinfo").read())
            print("checkout seen" if os.path.exists({str(settings.BASE_DIR)!r}) else "no checkout")
        """
        with leased_containers(backend) as ids:
            outcome = run_hostile(backend, code)[0]
    finally:
        outside.unlink()
        in_project.unlink()
    assert outcome.status == "OK", outcome.stderr
    assert secret not in outcome.stdout and "SECRET_KEY" not in outcome.stdout
    assert outcome.stdout.count("blocked") == 5 and "read " not in outcome.stdout
    lines = outcome.stdout.splitlines()
    assert lines[-1] == "no checkout"  # wherever it lives, /tmp included (the container's own)
    # Nothing of the host is mounted in: the image's overlay root, the engine's own files
    # (/etc/hostname, read-only), proc, sys, cgroups, devices, the tmpfs.
    mountinfo = "\n".join(lines[6:-1])
    assert " /etc/hostname " in mountinfo and str(settings.BASE_DIR) not in mountinfo
    assert not any(line.split()[4].startswith("/home") for line in lines[6:-1] if line.strip())
    inspected = docker_client.api.inspect_container(ids[0])
    assert inspected["Mounts"] == [] and inspected["HostConfig"]["Binds"] in (None, [])


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
        Path("/var/tmp") / f"pwned-{token}",
        Path("/run") / f"pwned-{token}",
        Path("/tmp") / f"scratch-{token}",
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
    """
    outcome = run_hostile(backend, code)[0]
    for target in targets:
        assert not target.exists(), target  # the last one was the container's own /tmp
    # The root is read-only, /dev the engine's (root's, read-only to the sandbox's user), no
    # /dev/shm (a private IPC namespace without one): the container's /tmp alone is writable.
    wrote = {line.split()[1] for line in outcome.stdout.splitlines() if line.startswith("wrote")}
    # Inside the container only its /tmp takes writes (a checkout under the host's /tmp is not
    # there: writing to its path writes to the container's scratch, which the host never sees).
    scratch = {str(t) for t in targets if str(t).startswith("/tmp/")}
    assert wrote == scratch and str(targets[-1]) in scratch, outcome.stdout


def test_ctypes_calls_into_libc_are_contained(backend):
    code = """
        import ctypes, os, socket
        libc = ctypes.CDLL(None, use_errno=True)
        results = {
            "unshare_user": libc.unshare(0x10000000),
            "mount": libc.mount(b"none", b"/tmp", b"tmpfs", 0, None),
            "ptrace_attach_1": libc.ptrace(16, 1, None, None),
            "setuid_0": libc.setuid(0),
            "socket_inet": libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0),
            "chroot": libc.chroot(b"/tmp"),
        }
        # The image has a shell (bwrap's root has none): what it runs is as contained.
        results["system"] = libc.system(b"id -u > /tmp/who; cat /proc/1/environ > /tmp/env")
        print(results)
        print(open("/tmp/who").read().strip(), os.path.getsize("/tmp/env"))
    """
    outcome = run_hostile(backend, code)[0]
    assert outcome.status == "OK", outcome.stderr
    first, second = outcome.stdout.splitlines()
    results = eval(first)  # noqa: S307
    results.pop("system")
    assert all(value == -1 for value in results.values()), results
    assert second == "65534 0"  # an unprivileged user, and the runner's /proc is closed to it


def test_the_container_has_the_limits_its_spec_sets(backend, docker_client):
    # The engine applied them: memory (swap included) = memory_mb + the runner's overhead,
    # pids 64, one CPU, no capabilities, no network, read-only root, seen on the container.
    with leased_containers(backend) as ids:
        outcome = run_hostile(
            backend,
            "import os\nprint(os.getuid(), os.getgid(), open('/proc/self/status').read())",
            limits=Limits(time_s=2.0, memory_mb=128),
        )[0]
    assert outcome.status == "OK", outcome.stderr
    assert outcome.stdout.startswith("65534 65534")
    caps = {
        line.split(":")[0]: line.split()[1]
        for line in outcome.stdout.splitlines()
        if line.startswith("Cap")
    }
    assert caps["CapEff"] == caps["CapPrm"] == caps["CapBnd"] == "0000000000000000"
    assert "NoNewPrivs:\t1" in outcome.stdout and "Seccomp:\t2" in outcome.stdout
    host = docker_client.api.inspect_container(ids[0])["HostConfig"]
    limit = (128 + docker_backend_module.RUNNER_OVERHEAD_MB) * 1024 * 1024
    assert host["Memory"] == host["MemorySwap"] == limit
    assert host["PidsLimit"] == docker_backend_module.PIDS_MAX
    assert host["NanoCpus"] == 1_000_000_000
    assert host["CapDrop"] == ["ALL"] and not host["CapAdd"] and not host["Privileged"]
    assert host["NetworkMode"] == "none" and host["ReadonlyRootfs"] is True
    assert host["IpcMode"] == "none" and host["AutoRemove"] is True
    assert host["LogConfig"]["Type"] == "none"


def test_a_submission_sees_nothing_of_the_one_before_in_the_same_container(backend, marker):
    # A warm container serves one submission after another: what one leaves (files in /tmp,
    # a read-only directory there, a POSIX message queue made through /dev/mqueue, SysV shared
    # memory and semaphores, a daemon, its environment) is gone for the next, which runs in the
    # same container.
    leave_traces = f"""
        import ctypes, os, sys
        os.makedirs("/tmp/locked/deep", exist_ok=True)
        open("/tmp/locked/deep/left-behind", "w").write("x")
        os.chmod("/tmp/locked", 0o500)
        open("/tmp/left-behind", "w").write("x")
        open("/dev/mqueue/left-behind", "w").write("x")
        libc = ctypes.CDLL(None)
        print("shmget", libc.shmget(0x5EED, 4096, 0o1666) >= 0)
        print("semget", libc.semget(0x5EEE, 1, 0o1666) >= 0)
        os.environ["LEFT_BEHIND"] = "1"
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", "{marker}"])
            os._exit(0)
        print("uid", os.getuid())
    """
    look = """
        import ctypes, os
        print(sorted(os.listdir("/tmp")), sorted(os.listdir("/dev/mqueue")))
        libc = ctypes.CDLL(None)
        print(libc.shmget(0x5EED, 4096, 0o666), libc.semget(0x5EEE, 1, 0o666))
        print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit()) == [1, os.getpid()])
        print(sorted(os.environ))
    """
    with leased_containers(backend) as ids:
        first = run_hostile(backend, leave_traces)[0]
        second = run_hostile(backend, look)[0]
    assert len(ids) == 2 and ids[0] == ids[1]  # the same warm container
    assert first.status == "OK", first.stderr
    assert "shmget True" in first.stdout and "semget True" in first.stdout
    assert "uid 65534" in first.stdout
    assert second.status == "OK", second.stderr
    lines = second.stdout.splitlines()
    assert lines[0] == "[] []"
    assert lines[1] == "-1 -1"
    assert lines[2] == "True"
    assert eval(lines[3]) == ["HOME", "LANG", "PATH"]  # noqa: S307 - the engine's HOSTNAME too
    assert host_processes_with(marker) == []


def test_an_oom_kill_discards_the_container(backend, docker_client):
    # Processes that together exceed the container's memory (each under its own address-space
    # limit) are OOM-killed by the kernel, not the runner; the job ends cleanly, but the
    # container it ran in is not reused: the next submission gets a new one.
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
    with leased_containers(backend) as ids:
        outcome = run_hostile(backend, code, limits=Limits(time_s=20.0, memory_mb=256))[0]
        after = run_hostile(backend, "print('next')", limits=Limits(time_s=2.0, memory_mb=256))[0]
    assert outcome.status == "OK", outcome.stderr
    assert eval(outcome.stdout).count(-9) >= 4  # noqa: S307 - at most one 200 MB child fits
    assert after.stdout == "next\n"
    assert ids[-1] != ids[0]
    assert _container_gone(docker_client, ids[0])


def test_a_lost_runner_discards_and_removes_its_container(backend, docker_client):
    # A job the runner cannot serve (here a header without its code) ends it: the submission
    # is SE, its container is removed, and the next submission gets a new one.
    lease = backend.open(limits=Limits())
    lost = lease.container.id
    lease.send({"harness": "stdio"})
    with pytest.raises(SandboxError, match="exited unexpectedly"):
        lease.recv(10)
    lease.close()
    with leased_containers(backend) as ids:
        result = judge(
            "print(1)", [TestSpec("", "1")], harness="stdio", limits=Limits(), backend=backend
        )
    assert result.verdict == "AC"
    assert ids[0] != lost
    assert _container_gone(docker_client, lost)


def test_a_container_is_replaced_after_max_uses(docker_client, monkeypatch):
    from .conftest import docker_test_image

    monkeypatch.setattr(docker_backend_module, "MAX_USES", 3)
    backend = docker_backend_module.DockerBackend(image=docker_test_image())
    try:
        with leased_containers(backend) as ids:
            for _ in range(4):
                run = run_hostile(backend, "print('x')", inputs=["", ""])
                assert [o.stdout for o in run] == ["x\n", "x\n"]
        assert ids[:3] == [ids[0]] * 3 and ids[3] != ids[0]
        assert backend.started == 2
        assert _container_gone(docker_client, ids[0])
    finally:
        backend.shutdown()


def test_the_runner_is_pid_1_and_the_image_interpreter_runs_the_tests(backend):
    outcome = run_hostile(
        backend, "import os, sys\nprint(os.getpid() > 1, os.getppid(), sys.flags.isolated)"
    )[0]
    assert outcome.status == "OK", outcome.stderr
    assert outcome.stdout.split() == ["True", "1", "1"]
