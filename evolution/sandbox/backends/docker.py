"""The docker backend: the same runner and policy in a locked-down container.

One container per submission, created with (see ``container_spec``): no network, a read-only
root filesystem, a size-capped tmpfs at /tmp as the only writable place, memory (swap
included), pids and CPU limits, every capability dropped, ``no-new-privileges``, no IPC
namespace sharing, uid/gid 65534, an empty environment. The runner is the container's PID 1
(no ``--init``), so it is immune to its children's signals and kills every leftover process
after each test, exactly as under bwrap.

The runner's source is passed on the command line, so any image with a Python 3.11+ at
``python3`` works (default ``python:3.11-slim``, ``SANDBOX_DOCKER_IMAGE``); nothing from the
project is copied into the container.
"""

from __future__ import annotations

import contextlib
import queue
import socket
import struct
import threading
import time

from .. import config
from ..types import Limits, SandboxError, SandboxUnavailable
from .base import PYTHON_FLAGS, RUNNER_SOURCE, Backend, FrameReader, Session, encode_frame

PIDS_MAX = 64
RUNNER_OVERHEAD_MB = 96


def container_spec(*, image: str, limits: Limits) -> dict:
    """The keyword arguments for ``client.containers.create``: the whole isolation policy."""
    from docker.types import Ulimit

    memory = f"{limits.memory_mb + RUNNER_OVERHEAD_MB}m"
    return {
        "image": image,
        "command": ["python3", *PYTHON_FLAGS, "-c", RUNNER_SOURCE],
        "user": "65534:65534",
        "network_mode": "none",
        "network_disabled": True,
        "read_only": True,
        "tmpfs": {"/tmp": f"rw,nosuid,nodev,size={limits.memory_mb}m,mode=1777"},
        "working_dir": "/tmp",
        "environment": {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"},
        "hostname": "sandbox",
        "mem_limit": memory,
        "memswap_limit": memory,
        "pids_limit": PIDS_MAX,
        "nano_cpus": 1_000_000_000,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges:true"],
        "ipc_mode": "none",
        "ulimits": [
            Ulimit(name="nofile", soft=64, hard=64),
            Ulimit(name="core", soft=0, hard=0),
        ],
        "stdin_open": True,
        "tty": False,
        "init": False,
        "auto_remove": False,
        "labels": {"benchforge.sandbox": "1"},
    }


class DockerSession(Session):
    backend_name = "docker"

    def __init__(self, client, spec: dict):
        self._reader = FrameReader()
        self._stderr = bytearray()
        self._pending = b""
        self._closed = False
        self.nproc = None
        try:
            self.container = client.containers.create(**spec)
        except Exception as exc:  # the SDK raises several unrelated types
            raise SandboxError(f"docker could not create the sandbox container: {exc}") from exc
        try:
            attached = self.container.attach_socket(
                params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
            )
            self._sock: socket.socket = getattr(attached, "_sock", attached)
            self._attached = attached
            self.container.start()
            self._outbox: queue.Queue = queue.Queue()
            self._writer = threading.Thread(target=self._write_loop, daemon=True)
            self._writer.start()
            self.info = self.recv(timeout=60.0)
            if not self.info.get("ready"):
                raise SandboxError(f"runner did not announce itself: {self.info!r}")
        except BaseException as exc:
            self.close()
            if isinstance(exc, SandboxError):
                raise
            raise SandboxError(f"docker sandbox failed to start: {exc}") from exc

    def _write_loop(self) -> None:
        while True:
            data = self._outbox.get()
            if data is None:
                return
            try:
                self._sock.sendall(data)
            except OSError:
                return

    def send(self, obj: dict) -> None:
        self._outbox.put(encode_frame(obj))

    def _read_some(self, timeout: float) -> bool:
        self._sock.settimeout(timeout)
        try:
            chunk = self._sock.recv(1 << 20)
        except TimeoutError:
            return True
        except OSError as exc:
            raise SandboxError(f"lost the container's stream: {exc}") from exc
        if not chunk:
            return False
        self._pending += chunk
        # Without a TTY docker multiplexes: 8-byte header (stream, 0, 0, 0, u32 size) + payload.
        while len(self._pending) >= 8:
            stream, size = self._pending[0], struct.unpack(">I", self._pending[4:8])[0]
            if len(self._pending) < 8 + size:
                break
            payload = self._pending[8 : 8 + size]
            self._pending = self._pending[8 + size :]
            if stream == 1:
                self._reader.feed(payload)
            elif len(self._stderr) < 65536:
                self._stderr += payload
        return True

    def recv(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            frame = self._reader.next_frame()
            if frame is not None:
                return frame
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SandboxError(f"sandbox did not answer within {timeout:.1f} s")
            if not self._read_some(remaining):
                frame = self._reader.next_frame()
                if frame is not None:
                    return frame
                detail = self._stderr.decode("utf-8", "replace").strip()[-2000:]
                raise SandboxError(f"sandbox container exited unexpectedly: {detail}")

    def oom_kills(self) -> int:
        with contextlib.suppress(Exception):
            self.container.reload()
            return 1 if self.container.attrs.get("State", {}).get("OOMKilled") else 0
        return 0

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        outbox = getattr(self, "_outbox", None)
        if outbox is not None:
            outbox.put(None)
        for closer in (getattr(self, "_attached", None), getattr(self, "_sock", None)):
            with contextlib.suppress(Exception):
                if closer is not None:
                    closer.close()
        with contextlib.suppress(Exception):
            self.container.remove(force=True)


class DockerBackend(Backend):
    name = "docker"

    def __init__(self, *, client=None, image: str | None = None):
        self.image = image or config.settings().SANDBOX_DOCKER_IMAGE
        if client is None:
            try:
                import docker

                client = docker.from_env()
                client.ping()
            except Exception as exc:
                raise SandboxUnavailable(
                    f"SANDBOX_BACKEND=docker but no docker engine answers: {exc}"
                ) from exc
        self.client = client

    def container_spec(self, limits: Limits) -> dict:
        return container_spec(image=self.image, limits=limits)

    def open(self, *, limits: Limits) -> DockerSession:
        return DockerSession(self.client, self.container_spec(limits))

    def describe(self) -> dict:
        return {"backend": self.name, "image": self.image}
