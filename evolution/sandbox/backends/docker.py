"""The docker backend: the same runner and policy in a locked-down container, kept warm.

Every container is created with (see ``container_spec``): no network, a read-only root
filesystem, a size-capped tmpfs at /tmp as the only writable place (and the IPC namespace's
/dev/mqueue, emptied by the runner), memory (swap included), pids and CPU limits, every
capability dropped, ``no-new-privileges``, a private IPC namespace, uid/gid 65534, an empty
environment, no log kept by the engine. The runner is the container's PID 1 (no ``--init``), so
it is immune to its children's signals and kills every leftover process after each test,
exactly as under bwrap.

A container is not started per submission: each process keeps a pool of warm containers (one
per sandbox slot, keyed by the memory limit a container's spec fixes), whose runner serves
submissions one after another in ``pool`` mode and resets the container between two (inside/pool.py,
``pool``: the reset a bwrap group does between its submissions). A container goes back to the
pool only after a clean, complete job, and once its runner said it is ready again; one that
misbehaved in any way (the host stopped waiting, the runner died or answered out of protocol,
the stream broke, an OOM kill happened in it) is removed, and after MAX_USES jobs it is
replaced.

Containers never outlive the process that owns them: their stdin is closed when the attach
connection drops (``StdinOnce``, whoever closes it: this process, or the kernel when it is
killed), the runner watches it even while a test runs and exits, which ends the container, and
the engine removes a container once it stops (``auto_remove``). A container this process
created but did not get to start, or one the engine failed to remove, carries the owner's
label (OWNER_LABEL): ``sweep_leftovers``, run when a backend starts, removes those whose
owner is gone.

The runner's source is passed on the command line, so any image with a Python 3.11+ at
``python3`` works (``SANDBOX_DOCKER_IMAGE``); nothing from the project is copied into the
container.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import queue
import select
import struct
import threading
import time

from .. import config
from ..types import Limits, SandboxError, SandboxUnavailable
from .base import PYTHON_FLAGS, RUNNER_SOURCE, Backend, FrameReader, Session, encode_frame

PIDS_MAX = 64
RUNNER_OVERHEAD_MB = 96
# A warm container serves at most this many submissions before it is replaced.
MAX_USES = 500
# Idle containers kept per process (more are started on demand, up to SANDBOX_MAX_PARALLEL).
MAX_IDLE = 8
# How long a used container may take to reset (a new one's start: SANDBOX_START_SECONDS).
RESET_TIMEOUT_S = 10.0
# Every sandbox container carries LABEL; OWNER_LABEL names the process that owns it.
LABEL = "benchforge.sandbox"
OWNER_LABEL = "benchforge.sandbox.owner"


def _read(path: str) -> str:
    try:
        with open(path) as source:
            return source.read()
    except OSError:
        return ""


def _start_time(pid: int) -> str:
    """The start time of process ``pid`` (clock ticks after boot), "" when there is none: with
    the pid, what tells a process from a later one that reused its pid."""
    stat = _read(f"/proc/{pid}/stat")
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else ""


def _pid_namespace() -> str:
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return ""


def owner_label(pid: int | None = None) -> str:
    """``boot/pid namespace/pid/start time`` of process ``pid`` (default this one)."""
    pid = os.getpid() if pid is None else pid
    boot = _read("/proc/sys/kernel/random/boot_id").strip()
    return f"{boot}/{_pid_namespace()}/{pid}/{_start_time(pid)}"


def owner_alive(label: str) -> bool | None:
    """Whether the process an OWNER_LABEL names still runs: False when it is gone (an earlier
    boot, or no process with that pid and start time), None when this process cannot tell
    (another PID namespace: a judge in another container sharing the engine)."""
    parts = label.split("/")
    if len(parts) != 4 or not parts[2].isdigit():
        return None
    boot, namespace, pid, started = parts
    if boot != _read("/proc/sys/kernel/random/boot_id").strip():
        return False
    if namespace != _pid_namespace():
        return None
    return bool(started) and _start_time(int(pid)) == started


def container_spec(*, image: str, limits: Limits, owner: str = "") -> dict:
    """The keyword arguments for ``client.containers.create``: the whole isolation policy. Of
    ``limits`` only ``memory_mb`` matters (the container's memory and its /tmp's size):
    containers are pooled by it."""
    from docker.types import LogConfig, Ulimit

    memory = f"{limits.memory_mb + RUNNER_OVERHEAD_MB}m"
    return {
        "image": image,
        "command": ["python3", *PYTHON_FLAGS, "-c", RUNNER_SOURCE, "pool"],
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
        # Attached (not detached): the SDK then sets StdinOnce, so the engine closes the
        # runner's stdin when the attach connection drops, however this process ends.
        "detach": False,
        "tty": False,
        "init": False,
        # Removed by the engine as soon as it stops (the runner exits at the end of its stdin).
        "auto_remove": True,
        # Nothing a submission prints is kept by the engine (nor written to its disk).
        "log_config": LogConfig(type="none"),
        "labels": {LABEL: "1", OWNER_LABEL: owner},
    }


class _Reaper:
    """Removes discarded containers (``remove(force=True)``) on a thread of its own, so that
    the judge thread that discards one does not wait for the engine."""

    def __init__(self):
        self._queue: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._pid = 0

    def _loop(self, jobs: queue.Queue) -> None:
        while True:
            container, done = jobs.get()
            try:
                container.remove(force=True)
            except Exception:  # gone already, or being removed by the engine (auto_remove)
                with contextlib.suppress(Exception):
                    container.wait(condition="removed", timeout=10)
            done.set()

    def remove(self, container) -> threading.Event:
        with self._lock:
            if self._thread is None or self._pid != os.getpid():
                self._pid, self._queue = os.getpid(), queue.Queue()
                self._thread = threading.Thread(
                    target=self._loop, args=(self._queue,), name="sandbox-reaper", daemon=True
                )
                self._thread.start()
        done = threading.Event()
        self._queue.put((container, done))
        return done


_reaper = _Reaper()


def _oom_kill_in(data: bytes) -> int | None:
    for line in data.split(b"\n"):
        key, _, value = line.partition(b" ")
        if key == b"oom_kill" and value.strip().isdigit():
            return int(value)
    return None


def _host_oom_counter(container) -> str:
    """The file on this host that counts the container's OOM kills (its memory cgroup's
    memory.oom_control, v1, or memory.events, v2), "" when this process cannot read it (the
    engine is on another host, or in another PID namespace than this process)."""
    with contextlib.suppress(Exception):
        container.reload()
        pid = int(container.attrs["State"]["Pid"])
        paths = {}
        for line in _read(f"/proc/{pid}/cgroup").splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(",") if controllers else ["unified"]:
                paths[name] = path
        candidates = []
        for line in _read("/proc/self/mounts").splitlines():
            parts = line.split()
            if len(parts) < 4:
                continue
            if parts[2] == "cgroup" and "memory" in parts[3].split(",") and "memory" in paths:
                candidates.append(f"{parts[1]}{paths['memory']}/memory.oom_control")
            elif parts[2] == "cgroup2" and "unified" in paths:
                candidates.append(f"{parts[1]}{paths['unified']}/memory.events")
        for path in candidates:
            # The pid could have been reused by now: the path must be this container's.
            if container.id in path and os.path.exists(path):
                return path
    return ""


class DockerSession(Session):
    """One container and its runner, attached: frames go to its stdin and come back on its
    (multiplexed) stdout. ``pool``: its runner serves job after job (see runner.pool)."""

    backend_name = "docker"

    def __init__(self, client, spec: dict, *, warm: bool = True):
        self._reader = FrameReader()
        self._stderr = bytearray()
        self._pending = bytearray()
        self._closed = False
        self._send_lock = threading.Lock()
        self._outbox: queue.Queue = queue.Queue()
        self._queued = 0
        self._oom_fd: int | None = None
        self.nproc = None
        self.key = None
        self.uses = 0
        self.pool = False
        self.owes_ready = False  # a used container: its runner's next frame must be "ready"
        self.reported_oom = None  # the runner's count of OOM kills at its last "ready"
        self.started_at = time.monotonic()
        try:
            self.container = client.containers.create(**spec)
        except Exception as exc:  # the SDK raises several unrelated types
            detail = str(exc)
            if type(exc).__name__ == "ImageNotFound":
                detail = (
                    f"image {spec.get('image')!r} is not on this engine: pull or build it "
                    f"(SANDBOX_DOCKER_IMAGE names it) ({exc})"
                )
            raise SandboxError(f"docker could not create the sandbox container: {detail}") from exc
        try:
            attached = self.container.attach_socket(
                params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
            )
            self._attached = attached
            self._sock = getattr(attached, "_sock", attached)
            self._sock.setblocking(False)
            self._fd = self._sock.fileno()
            self._readable = select.poll()  # select() cannot watch descriptors >= 1024
            self._readable.register(self._fd, select.POLLIN)
            self._writer = threading.Thread(target=self._write_loop, daemon=True)
            self._writer.start()
            self.container.start()
            self.info = self.recv(timeout=config.start_seconds())
            if not self.info.get("ready"):
                raise SandboxError(f"runner did not announce itself: {self.info!r}")
            self.pool = bool(self.info.get("pool"))
            if self.pool:
                self.reported_oom = self.info.get("oom")
                self.send({"go": True, "warm": warm})
                counter = _host_oom_counter(self.container)
                if counter:
                    with contextlib.suppress(OSError):
                        self._oom_fd = os.open(counter, os.O_RDONLY | os.O_CLOEXEC)
        except BaseException as exc:
            self.close(kill=True)
            if isinstance(exc, SandboxError):
                raise
            raise SandboxError(f"docker sandbox failed to start: {exc}") from exc

    # -- the stream -------------------------------------------------------------------------

    def _write_loop(self) -> None:
        while True:
            data = self._outbox.get()
            if data is None:
                return
            view = memoryview(data)
            try:
                while view:
                    try:
                        view = view[self._sock.send(view) :]
                    except BlockingIOError:
                        writable = select.poll()  # select() cannot watch descriptors >= 1024
                        writable.register(self._fd, select.POLLOUT)
                        writable.poll(1000)
            except OSError:  # the container is gone: recv reports why
                return
            finally:
                with self._send_lock:
                    self._queued -= 1

    def _put(self, data: bytes) -> None:
        """Write ``data`` after everything sent before it: at once when nothing waits in the
        writer thread and the socket takes it whole, else the rest through the thread (the
        runner reads its next input only when it is ready; the reader must never block)."""
        with self._send_lock:
            if self._closed:
                return
            if not self._queued:
                try:
                    written = self._sock.send(data)
                except BlockingIOError:
                    written = 0
                except OSError:  # the container is gone: recv reports why
                    return
                if written == len(data):
                    return
                data = data[written:]
            self._queued += 1
            self._outbox.put(data)

    def send(self, obj: dict) -> None:
        self._put(encode_frame(obj))

    def send_many(self, objs: list[dict]) -> None:
        self._put(b"".join(encode_frame(obj) for obj in objs))

    def _read_some(self, timeout: float) -> bool:
        """Read what the socket holds (waiting up to ``timeout``); False at its end."""
        if not self._readable.poll(max(1, int(timeout * 1000) + 1)):
            return True
        try:
            chunk = self._sock.recv(1 << 20)
        except (BlockingIOError, InterruptedError):
            return True
        except OSError as exc:
            raise SandboxError(f"lost the container's stream: {exc}") from exc
        if not chunk:
            return False
        pending = self._pending
        pending += chunk
        # Without a TTY docker multiplexes: 8-byte header (stream, 0, 0, 0, u32 size) + payload.
        start = 0
        while len(pending) - start >= 8:
            stream = pending[start]
            (size,) = struct.unpack_from(">I", pending, start + 4)
            if len(pending) - start < 8 + size:
                break
            payload = pending[start + 8 : start + 8 + size]
            start += 8 + size
            if stream == 1:
                self._reader.feed(payload)
            elif len(self._stderr) < 65536:
                self._stderr += payload
        del pending[:start]
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

    # -- pool support ------------------------------------------------------------------------

    def confirm_ready(self) -> bool:
        """Read a used container's "ready" frame: its runner has reset it. False (discard it):
        no such frame within RESET_TIMEOUT_S, or the runner counts an OOM kill since its last
        one (during the job before)."""
        try:
            frame = self.recv(RESET_TIMEOUT_S)
        except SandboxError:
            return False
        if not frame.get("ready"):
            return False
        self.owes_ready = False
        before, self.reported_oom = self.reported_oom, frame.get("oom")
        return before is None or before == self.reported_oom

    def hung_up(self) -> bool:
        """Whether the engine has closed the container's end of the stream (it stopped), seen
        without waiting: what the runner sent before (its "ready") may still be unread."""
        probe = select.poll()
        probe.register(self._fd, select.POLLRDHUP)
        gone = select.POLLRDHUP | select.POLLHUP | select.POLLERR | select.POLLNVAL
        return any(mask & gone for _, mask in probe.poll(0))

    @property
    def counts_oom_here(self) -> bool:
        """Whether this process reads the container's OOM kills from its cgroup on this host."""
        return self._oom_fd is not None

    def oom_kills(self) -> int:
        """OOM kills in the container so far: read from its cgroup on this host when this
        process can, else as its runner counted them at its last "ready" frame (then a kill
        during a job is seen only after it, when the container is discarded for it)."""
        if self._oom_fd is not None:
            with contextlib.suppress(OSError):
                count = _oom_kill_in(os.pread(self._oom_fd, 4096, 0))
                if count is not None:
                    return count
        return self.reported_oom or 0

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self, *, kill: bool = True) -> None:
        """Close the stream: the runner sees its end and exits, and the engine removes the
        container. ``kill``: the container may not be healthy (a discard): it is also removed
        by force, on the reaper's thread. Returns at once either way."""
        with self._send_lock:
            if self._closed:
                return
            self._closed = True
        self._outbox.put(None)
        for closer in (getattr(self, "_attached", None), getattr(self, "_sock", None)):
            with contextlib.suppress(Exception):
                if closer is not None:
                    closer.close()
        if self._oom_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._oom_fd)
            self._oom_fd = None
        container = getattr(self, "container", None)
        if kill and container is not None:
            self.removed = _reaper.remove(container)


class _Lease(Session):
    """One submission's use of a pooled container.

    A used container's job is sent at once, while its runner may still be resetting it (the
    runner reads the job only after its reset and its "ready" frame): the host does not wait
    for that frame before sending, only before reading the job's first answer. If the frame
    does not come, or says the job before caused an OOM kill, the container is discarded and
    what was sent so far goes to another one (nothing of the job has been reported yet)."""

    def __init__(self, backend: DockerBackend, session: DockerSession):
        self.backend = backend
        self.backend_name, self.nproc = session.backend_name, session.nproc
        self.reusable = False
        self._closed = False
        self._sent: list[bytes] = []  # what was sent before the container was confirmed
        self._use(session)

    def _use(self, session: DockerSession) -> None:
        self.session, self.info = session, session.info
        self._unconfirmed = session.owes_ready
        self._oom_at_start = session.oom_kills()

    @property
    def container(self):
        return self.session.container

    def _put(self, data: bytes) -> None:
        if self._unconfirmed:
            self._sent.append(data)
        self.session._put(data)

    def send(self, obj: dict) -> None:
        self._put(encode_frame(obj))

    def send_many(self, objs: list[dict]) -> None:
        self._put(b"".join(encode_frame(obj) for obj in objs))

    def recv(self, timeout: float) -> dict:
        if self._unconfirmed:
            self._confirm()
        return self.session.recv(timeout)

    def _confirm(self) -> None:
        while self._unconfirmed and not self.session.confirm_ready():
            key = self.session.key
            self.backend._discard(self.session)
            self._use(self.backend._take_or_start(key))
            for data in self._sent:
                self.session._put(data)
        self._unconfirmed = False
        self._sent = []

    def oom_kills(self) -> int:
        return self.session.oom_kills()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            reusable = self.reusable and not self._unconfirmed
            if reusable and self.session.counts_oom_here:
                # An OOM kill during this job: the container is not reused.
                reusable = self.session.oom_kills() == self._oom_at_start
            self.backend._release(self.session, reusable)


def sweep_leftovers(client) -> int:
    """Remove the sandbox containers whose owning process is gone: ones it created but did not
    get to start before it was killed, or the engine did not remove. Containers of a process
    this one cannot see (another PID namespace) are left alone. Returns how many."""
    removed = 0
    for entry in client.api.containers(all=True, filters={"label": OWNER_LABEL}):
        if owner_alive((entry.get("Labels") or {}).get(OWNER_LABEL, "")) is False:
            with contextlib.suppress(Exception):
                client.api.remove_container(entry["Id"], force=True)
                removed += 1
    return removed


class DockerBackend(Backend):
    name = "docker"
    # Each submission takes a warm container and gives it back (the pool does what a bwrap
    # group does), so batches are not grouped.
    groups = False
    # Whether a new container's runner warms itself (imports, LiveCodeBench's prelude) before
    # its first job; a one-shot command that judges one program turns this off.
    warm_factories = True

    def __init__(self, *, client=None, image: str | None = None, sweep: bool | None = None):
        self.image = image or config.settings().SANDBOX_DOCKER_IMAGE
        if sweep is None:
            sweep = client is None
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
        self._lock = threading.Condition()
        self._idle: list[DockerSession] = []  # least recently used first
        self._starting: dict[int, int] = {}  # per key: containers prewarm() is starting
        self._pid = os.getpid()
        self.started = 0  # containers started by this backend (bench, tests)
        self.discarded = 0  # and removed after they misbehaved (or could not be pooled)
        atexit.register(self.shutdown, wait=False)
        if sweep:
            threading.Thread(target=self._sweep, name="sandbox-sweep", daemon=True).start()

    def _sweep(self) -> None:
        with contextlib.suppress(Exception):
            sweep_leftovers(self.client)

    @staticmethod
    def _key(limits: Limits) -> int:
        return limits.memory_mb

    def container_spec(self, limits: Limits) -> dict:
        return container_spec(image=self.image, limits=limits, owner=owner_label())

    def _start(self, key: int) -> DockerSession:
        session = DockerSession(
            self.client, self.container_spec(Limits(memory_mb=key)), warm=self.warm_factories
        )
        session.key = key
        with self._lock:
            self.started += 1
        return session

    def _take(self, key: int) -> DockerSession | None:
        """An idle container for ``key`` (the most recently used), waiting for one prewarm()
        is starting rather than starting another; None: start one. One that stopped while it
        was idle (its stream has ended) is discarded, not handed out."""
        with self._lock:
            if self._pid != os.getpid():  # a forked worker must not share its parent's pool
                self._idle, self._starting, self._pid = [], {}, os.getpid()
            while True:
                for index in range(len(self._idle) - 1, -1, -1):
                    if self._idle[index].key == key:
                        session = self._idle.pop(index)
                        if not session.hung_up():
                            return session
                        self._discard(session)
                        break
                else:
                    if not self._starting.get(key):
                        return None
                    self._lock.wait()

    def open(self, *, limits: Limits) -> Session:
        """A sandbox for ONE submission: a warm container from the pool (being reset since its
        last job: see _Lease), or a new one."""
        return _Lease(self, self._take_or_start(self._key(limits)))

    def _take_or_start(self, key: int) -> DockerSession:
        session = self._take(key)
        return session if session is not None else self._start(key)

    def _release(self, session: DockerSession, reusable: bool) -> None:
        if session.closed:
            return  # discarded already (a lease that moved to another container and failed)
        session.uses += 1
        if reusable and session.pool and session.uses < MAX_USES and not session.closed:
            with self._lock:
                if self._pid == os.getpid():
                    session.owes_ready = True
                    self._idle.append(session)
                    evicted = self._idle.pop(0) if len(self._idle) > MAX_IDLE else None
                    self._lock.notify_all()
                    if evicted is None:
                        return
                    session = evicted
        if reusable and session.pool:
            session.close(kill=False)  # retired or evicted: it ends at the end of its stream
            if session.uses >= MAX_USES and self._pid == os.getpid():
                # Its successor starts now, in the background, not on a submission's path.
                self.prewarm(1, wait=False, limits=Limits(memory_mb=session.key))
        else:
            self._discard(session)

    def _discard(self, session: DockerSession) -> None:
        with self._lock:
            self.discarded += 1
        session.close(kill=True)

    def prewarm(self, count: int = 1, *, wait: bool = True, limits: Limits | None = None) -> None:
        """Start ``count`` containers into the idle pool, each on a thread of its own, for
        ``limits`` (default: the default limits, what judge_batch's jobs use unless they say
        otherwise). ``wait=False`` returns at once: ``open`` waits for one of them rather than
        starting another. A container that fails to start is left out; ``open`` then starts
        one itself, and reports why if that fails too."""
        key = self._key(limits or Limits())
        count = max(0, min(count, MAX_IDLE))
        with self._lock:
            self._starting[key] = self._starting.get(key, 0) + count
        threads = [
            threading.Thread(
                target=self._prewarm_one, args=(key,), name="sandbox-prewarm", daemon=True
            )
            for _ in range(count)
        ]
        for thread in threads:
            thread.start()
        if wait:
            for thread in threads:
                thread.join()

    def _prewarm_one(self, key: int) -> None:
        try:
            session = self._start(key)
        except Exception:  # SandboxError: open() meets it again
            session = None
        with self._lock:  # pooled before a waiting open() looks again
            self._starting[key] -= 1
            if session is not None and session.pool and len(self._idle) < MAX_IDLE:
                self._idle.append(session)
                session = None
            self._lock.notify_all()
        if session is not None:
            self._discard(session)

    def shutdown(self, *, wait: bool = True) -> None:
        """Stop the idle containers. ``wait=False`` (the process is exiting): their streams
        are closed and nothing is waited for (each runner exits at its stream's end, and the
        engine removes its container); ``wait=True``: each is removed, and waited for."""
        with self._lock:
            idle, self._idle = self._idle, []
        for session in idle:
            session.close(kill=wait)
        if wait:
            for session in idle:
                removed = getattr(session, "removed", None)
                if removed is not None:
                    removed.wait(30)

    def describe(self) -> dict:
        return {"backend": self.name, "image": self.image, "idle": len(self._idle)}
