"""The docker backend without a docker engine: the container specification it builds, and its
session protocol against a fake client that implements the SDK surface it uses
(containers.create, attach_socket, start, reload, attrs, remove). The fake runs the runner as
a plain local process, not as PID 1: the runner then serves one job and says it cannot pool,
and the backend removes the container after it. The real engine, warm containers and all, is
tested in test_docker_engine.py."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import tempfile
import threading
import time

from docker.types import LogConfig, Ulimit

from evolution.sandbox import Limits, TestSpec, judge
from evolution.sandbox.backends.base import PYTHON_FLAGS, RUNNER_SOURCE
from evolution.sandbox.backends.docker import (
    LABEL,
    OWNER_LABEL,
    DockerBackend,
    container_spec,
    owner_alive,
    owner_label,
)


class FakeContainer:
    """Plays a container by running the command's runner as a local process, speaking
    docker's multiplexed attach stream (8-byte header per chunk) over a socket pair."""

    def __init__(self, kwargs):
        self.kwargs = kwargs
        self.ours, self.theirs = socket.socketpair()
        self.attrs = {"State": {"OOMKilled": False}}
        self.removed = False
        self.proc = None

    def attach_socket(self, params):
        assert params == {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
        return self.ours

    def start(self):
        command = self.kwargs["command"]
        assert command[0] == "python3"
        self.scratch = tempfile.mkdtemp()
        self.proc = subprocess.Popen(
            ["/usr/bin/python3", *command[1:]],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.scratch,
            env=self.kwargs["environment"],
        )
        threading.Thread(target=self._pump_in, daemon=True).start()
        for stream, number in ((self.proc.stdout, 1), (self.proc.stderr, 2)):
            threading.Thread(target=self._pump_out, args=(stream, number), daemon=True).start()

    def _pump_in(self):
        try:
            while data := self.theirs.recv(65536):
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
            self.proc.stdin.close()
        except (OSError, ValueError):
            pass  # the container was removed meanwhile: the daemon drops the attachment

    def _pump_out(self, stream, number):
        try:
            while data := stream.read1(65536):
                self.theirs.sendall(struct.pack(">BxxxI", number, len(data)) + data)
            if number == 1:
                self.theirs.shutdown(socket.SHUT_WR)
        except (OSError, ValueError):
            pass  # the container was removed meanwhile: the daemon drops the attachment

    def reload(self):
        pass

    def remove(self, force=False):
        assert force
        self.removed = True
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
        self.theirs.close()


class FakeContainers:
    def __init__(self):
        self.created = []

    def create(self, **kwargs):
        container = FakeContainer(kwargs)
        self.created.append(container)
        return container


class FakeClient:
    def __init__(self):
        self.containers = FakeContainers()


def test_container_spec_locks_the_container_down():
    spec = container_spec(
        image="python:3.11-slim", limits=Limits(time_s=2, memory_mb=256), owner="the-owner"
    )
    assert spec["image"] == "python:3.11-slim"
    assert spec["command"] == ["python3", *PYTHON_FLAGS, "-c", RUNNER_SOURCE, "pool"]
    assert spec["network_mode"] == "none" and spec["network_disabled"] is True
    assert spec["read_only"] is True
    assert spec["tmpfs"] == {"/tmp": "rw,nosuid,nodev,size=256m,mode=1777"}
    assert spec["working_dir"] == "/tmp"
    assert spec["user"] == "65534:65534"
    assert spec["cap_drop"] == ["ALL"]
    assert spec["security_opt"] == ["no-new-privileges:true"]
    assert spec["mem_limit"] == spec["memswap_limit"] == "352m"  # no swap beyond the limit
    assert spec["pids_limit"] == 64
    assert spec["nano_cpus"] == 1_000_000_000
    assert spec["ipc_mode"] == "none"
    assert spec["init"] is False  # the runner must be PID 1 to reap and kill everything
    assert set(spec["environment"]) == {"PATH", "HOME", "LANG"}
    assert Ulimit(name="nofile", soft=64, hard=64) in spec["ulimits"]
    assert "volumes" not in spec and "mounts" not in spec and "privileged" not in spec
    # What a pool of warm containers needs to never outlive its owner: stdin closed when the
    # attach connection drops (the SDK sets StdinOnce for an attached container with stdin),
    # removal by the engine once stopped, and the owner named for the sweep of leftovers.
    assert spec["stdin_open"] is True and spec["detach"] is False
    assert spec["auto_remove"] is True
    assert spec["labels"] == {LABEL: "1", OWNER_LABEL: "the-owner"}
    assert spec["log_config"] == LogConfig(type="none")


def test_the_owner_label_tells_a_live_owner_from_a_gone_one():
    mine = owner_label()
    assert owner_alive(mine) is True
    child = subprocess.Popen(["sleep", "30"])
    theirs = owner_label(child.pid)
    assert owner_alive(theirs) is True
    child.kill()
    child.wait()
    assert owner_alive(theirs) is False
    boot, namespace, pid, started = mine.split("/")
    assert owner_alive(f"{boot}/{namespace}/{pid}/{int(started) + 1}") is False  # pid reused
    assert owner_alive(f"another-boot/{namespace}/{pid}/{started}") is False
    assert owner_alive(f"{boot}/another-namespace/{pid}/{started}") is None  # cannot tell
    assert owner_alive("") is None
    assert pid == str(os.getpid())


def test_docker_backend_judges_through_the_sdk_surface(settings):
    client = FakeClient()
    backend = DockerBackend(client=client, image="python:3.11-slim")
    result = judge(
        "print(int(input()) * 2)",
        [TestSpec("2", "4"), TestSpec("5", "11")],
        harness="stdio",
        limits=Limits(time_s=2, memory_mb=256),
        backend=backend,
    )
    assert [t.verdict for t in result.tests] == ["AC", "WA"]
    assert result.backend == "docker"
    (container,) = client.containers.created
    assert container.kwargs == backend.container_spec(Limits(time_s=2, memory_mb=256))
    # Its runner could not pool (not PID 1): the container is removed, even on success, on
    # the backend's reaper thread.
    deadline = time.monotonic() + 10
    while not container.removed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert container.removed
    assert backend._idle == []


def test_docker_backend_reports_a_dead_container_as_se():
    class DyingContainers(FakeContainers):
        def create(self, **kwargs):
            container = super().create(**kwargs)
            container.start = lambda: container.theirs.close()
            return container

    client = FakeClient()
    client.containers = DyingContainers()
    result = judge(
        "print(1)",
        [TestSpec("", "1")],
        harness="stdio",
        limits=Limits(time_s=2),
        backend=DockerBackend(client=client),
    )
    assert result.verdict == "SE"
