"""What every backend provides: a Session speaking the runner's framed protocol."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import select
import selectors
import struct
import subprocess
import threading
import time
import zlib
from functools import cache

from ..inside import bundle
from ..types import Limits, SandboxError

# The runner, as one program: the modules of evolution/sandbox/inside/ in order.
RUNNER_SOURCE = bundle()
# Interpreter flags inside every backend: isolated mode (no user site, no PYTHON* variables,
# no script directory on sys.path), no site module, no .pyc writes, UTF-8 everywhere.
PYTHON_FLAGS = ["-I", "-S", "-B", "-X", "utf8"]


# Compiling the runner's source costs ~7 ms per sandbox; instead the sandbox interpreter
# compiles it ONCE (per host process), and every sandbox starts from this bootstrap, which reads
# the marshalled code object (written by the host first on stdin) and executes it.
BOOTSTRAP = (
    "import marshal, os\n"
    "n = {size}\nb = b''\n"
    "while len(b) < n:\n"
    "    c = os.read(0, n - len(b))\n"
    "    if not c:\n"
    "        raise SystemExit(3)\n"
    "    b += c\n"
    "exec(marshal.loads(b))\n"
)


def disk_cached(kind: str, key: list, compute, *, binary: bool = False):
    """``compute()``'s value, kept in SANDBOX_CACHE_DIR across processes under a key that
    changes when its inputs do. Probing the interpreter costs a few subprocesses (~0.1-0.7 s):
    once per installation instead of once per judge start. The directory is private to the
    judging user (0700): what it holds decides what the sandbox mounts and runs. Each file
    starts with its full key, compared on every read (the file name is only a checksum)."""
    from ..config import settings

    directory = str(getattr(settings(), "SANDBOX_CACHE_DIR", "") or "")
    header = json.dumps([kind, *key], default=str).encode() + b"\n"
    digest = f"{zlib.crc32(header):08x}{zlib.adler32(header):08x}"
    path = os.path.join(directory, f"{kind}-{digest}.{'bin' if binary else 'json'}")
    if directory not in ("", "."):
        with contextlib.suppress(OSError, ValueError):
            if os.stat(path).st_uid == os.geteuid():
                with open(path, "rb") as cached:
                    data = cached.read()
                if data.startswith(header):
                    data = data[len(header) :]
                    return data if binary else json.loads(data)
    value = compute()
    if directory not in ("", "."):
        with contextlib.suppress(OSError):
            os.makedirs(directory, mode=0o700, exist_ok=True)
            os.chmod(directory, 0o700)
            temporary = f"{path}.{os.getpid()}.tmp"
            with open(temporary, "wb") as out:
                out.write(header + (value if binary else json.dumps(value).encode()))
            os.replace(temporary, path)
    return value


def interpreter_key(python: str) -> list:
    """What identifies an installed interpreter: its real path, size and modification time."""
    real = os.path.realpath(python)
    try:
        info = os.stat(real)
    except OSError:
        return [real, None]
    return [real, info.st_size, info.st_mtime_ns]


@cache
def compiled_runner(python: str) -> bytes:
    """The runner compiled and marshalled BY the sandbox interpreter (marshal is only stable
    within one Python version, so the host never marshals code for it)."""
    source = RUNNER_SOURCE.encode()
    return disk_cached(
        "runner",
        [*interpreter_key(python), len(source), zlib.crc32(source), zlib.adler32(source)],
        lambda: _compile_runner(python),
        binary=True,
    )


def _compile_runner(python: str) -> bytes:
    script = (
        "import marshal, sys; sys.stdout.buffer.write(marshal.dumps("
        "compile(sys.stdin.read(), '<runner>', 'exec')))"
    )
    done = subprocess.run(
        [python, *PYTHON_FLAGS, "-c", script],
        input=RUNNER_SOURCE.encode(),
        capture_output=True,
        timeout=60,
    )
    if done.returncode != 0 or not done.stdout:
        raise SandboxError(f"{python} could not compile the runner: {done.stderr[-500:]!r}")
    return done.stdout


def bootstrap_command(python: str) -> tuple[list[str], bytes]:
    """(argv tail, bytes to write first on stdin) that start the runner under ``python``."""
    code = compiled_runner(python)
    return [python, *PYTHON_FLAGS, "-c", BOOTSTRAP.format(size=len(code))], code


class _Spawner:
    """Starts every sandbox process from ONE long-lived thread.

    bwrap's --die-with-parent uses PR_SET_PDEATHSIG, which fires when the parent THREAD
    exits: a sandbox started from a short-lived worker thread (a thread pool, a shard) would be
    killed with it, pooled or not. Children of this thread live as long as the process."""

    def __init__(self):
        self._queue: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._pid = 0

    def _loop(self) -> None:
        while True:
            fn, done = self._queue.get()
            try:
                done["value"] = fn()
            except BaseException as exc:
                done["error"] = exc
            done["event"].set()

    def call(self, fn):
        with self._lock:
            if self._thread is None or self._pid != os.getpid():
                self._pid = os.getpid()
                self._queue = queue.Queue()
                self._thread = threading.Thread(
                    target=self._loop, name="sandbox-spawner", daemon=True
                )
                self._thread.start()
        done = {"event": threading.Event()}
        self._queue.put((fn, done))
        done["event"].wait()
        if "error" in done:
            raise done["error"]
        return done["value"]


spawner = _Spawner()


def encode_frame(obj: dict) -> bytes:
    data = json.dumps(obj).encode()
    return struct.pack(">I", len(data)) + data


class Session:
    """One sandbox instance for one submission. Subclasses provide the byte transport."""

    backend_name = ""
    info: dict

    def send(self, obj: dict) -> None:
        raise NotImplementedError

    def send_many(self, objs: list[dict]) -> None:
        for obj in objs:
            self.send(obj)

    def recv(self, timeout: float) -> dict:
        """The next frame from the runner; SandboxError on timeout, EOF or garbage."""
        raise NotImplementedError

    def oom_kills(self) -> int:
        return 0

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Backend:
    name = ""
    # Whether one sandbox may judge several submissions of a batch one after another (a
    # runner that resets its namespaces between them, and per-submission limits): bwrap only.
    groups = False

    def open(self, *, limits: Limits) -> Session:
        raise NotImplementedError

    def describe(self) -> dict:
        return {"backend": self.name}


class FrameReader:
    """Incremental decoder of ``<u32 length><json>`` frames from a byte stream."""

    MAX_FRAME = 1 << 30

    def __init__(self):
        self.buffer = bytearray()

    def feed(self, data: bytes) -> None:
        self.buffer += data

    def next_frame(self) -> dict | None:
        if len(self.buffer) < 4:
            return None
        (length,) = struct.unpack(">I", self.buffer[:4])
        if length > self.MAX_FRAME:
            raise SandboxError(f"runner sent an oversized frame ({length} bytes)")
        if len(self.buffer) < 4 + length:
            return None
        payload = bytes(self.buffer[4 : 4 + length])
        del self.buffer[: 4 + length]
        try:
            return json.loads(payload)
        except ValueError as exc:
            raise SandboxError(f"runner sent a malformed frame: {exc}") from exc


class ProcessSession(Session):
    """A runner started as a local process tree (bwrap, or the unsafe backend)."""

    def __init__(
        self,
        argv: list[str],
        *,
        popen_kwargs: dict,
        cgroups=None,
        preamble: bytes = b"",
        handshake: bool = True,
    ):
        """Start the process tree. ``handshake=False``: return once it is started; the caller
        then calls ``handshake`` (which waits for the runner to be ready), e.g. from another
        thread while it goes on."""
        self.cgroups = cgroups
        self._reader = FrameReader()
        self._stderr = bytearray()
        self._outbox: queue.Queue = queue.Queue()
        self._queued = 0  # writes handed to the writer thread and not yet done
        self._send_lock = threading.Lock()
        self._closed = False
        try:
            self.proc = spawner.call(
                lambda: subprocess.Popen(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    **popen_kwargs,
                )
            )
        except OSError as exc:
            if cgroups is not None:
                cgroups.close()
            raise SandboxError(f"could not start the sandbox: {exc}") from exc
        # Into its cgroups at once, while its interpreter starts: what it forks from now on is
        # born inside. Moving a process can wait a kernel grace period; off the critical path
        # here. What it forked before this move is moved once it is ready (below).
        self._placing = None
        if cgroups is not None and cgroups.active:
            self._placing = threading.Thread(target=cgroups.add, args=(self.proc.pid,), daemon=True)
            self._placing.start()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.proc.stdout, selectors.EVENT_READ, "out")
        self._selector.register(self.proc.stderr, selectors.EVENT_READ, "err")
        # Frames to the runner are written at once when the pipe takes them whole; what it
        # does not take goes through a thread: the runner reads its next input only when it is
        # ready, and a full pipe must never block the reader of its results.
        self._stdin_fd = self.proc.stdin.fileno()
        os.set_blocking(self._stdin_fd, False)
        self._writer = threading.Thread(target=self._write_loop, daemon=True)
        self._writer.start()
        if preamble:
            self._put(preamble)
        if handshake:
            self.handshake()

    def handshake(self) -> None:
        """Wait for the runner to announce itself, then make sure every process of the tree
        is in the sandbox's cgroups (before it may fork). Closes the session on failure."""
        from .. import config

        try:
            self.info = self.recv(timeout=config.start_seconds())
            if not self.info.get("ready"):
                raise SandboxError(f"runner did not announce itself: {self.info!r}")
            if self._placing is not None:
                self._placing.join()
                for pid in self.tree_pids():
                    self.cgroups.add(pid)
        except BaseException:
            self.close()
            raise

    def tree_pids(self) -> list[int]:
        """The host PIDs of the process tree (read before any untrusted code runs)."""
        pids = [self.proc.pid]
        index = 0
        while index < len(pids):
            parent = pids[index]
            index += 1
            with contextlib.suppress(OSError):
                for task in os.listdir(f"/proc/{parent}/task"):
                    with open(f"/proc/{parent}/task/{task}/children") as listing:
                        text = listing.read()
                    pids += [int(p) for p in text.split()]
        return pids

    def _write_loop(self) -> None:
        fd = self._stdin_fd
        # poll, not select.select: select refuses descriptors from 1,024 on, which a long-lived
        # worker's pipes reach (the thread died and the runner never got its code).
        writable = select.poll()
        writable.register(fd, select.POLLOUT)
        while True:
            data = self._outbox.get()
            if data is None:
                break
            view = memoryview(data)
            try:
                while view:
                    try:
                        view = view[os.write(fd, view) :]
                    except BlockingIOError:
                        writable.poll()
            except OSError:  # the runner is gone: recv reports why
                break
            finally:
                with self._send_lock:
                    self._queued -= 1
        with contextlib.suppress(OSError, ValueError):
            self.proc.stdin.close()

    def _put(self, data: bytes) -> None:
        """Write ``data`` after everything sent before it: directly when nothing waits in the
        writer thread and the pipe takes it whole (no thread hand-off per frame), else the
        rest through the thread."""
        with self._send_lock:
            if not self._queued and not self._closed:
                try:
                    written = os.write(self._stdin_fd, data)
                except BlockingIOError:
                    written = 0
                except OSError:  # the runner is gone: recv reports why
                    return
                if written == len(data):
                    return
                data = data[written:]
            self._queued += 1
            self._outbox.put(data)

    def send(self, obj: dict) -> None:
        self._put(encode_frame(obj))

    def send_many(self, objs: list[dict]) -> None:
        """Several frames in one write (one system call)."""
        self._put(b"".join(encode_frame(obj) for obj in objs))

    def recv(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            frame = self._reader.next_frame()
            if frame is not None:
                return frame
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SandboxError(f"sandbox did not answer within {timeout:.1f} s")
            events = self._selector.select(remaining)
            for key, _ in events:
                chunk = os.read(key.fileobj.fileno(), 1 << 20)
                if key.data == "err":
                    if not chunk:
                        self._selector.unregister(key.fileobj)
                    elif len(self._stderr) < 65536:
                        self._stderr += chunk
                    continue
                if not chunk:
                    self._selector.unregister(key.fileobj)
                    frame = self._reader.next_frame()
                    if frame is not None:
                        return frame
                    raise SandboxError(self._death_message())
                self._reader.feed(chunk)

    def _death_message(self) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2)
        # Whatever the process wrote last on stderr explains a failure to start.
        with contextlib.suppress(OSError, ValueError):
            os.set_blocking(self.proc.stderr.fileno(), False)
            while chunk := os.read(self.proc.stderr.fileno(), 65536):
                self._stderr += chunk
        detail = self._stderr.decode("utf-8", "replace").strip()[-2000:]
        return f"sandbox exited unexpectedly (status {self.proc.returncode}): {detail}"

    def oom_kills(self) -> int:
        return self.cgroups.oom_kills() if self.cgroups is not None else 0

    def close(self, *, wait: bool = True) -> None:
        """Kill the process tree and remove its cgroups. ``wait=False`` (this process is
        exiting): nothing is waited for; bwrap's --die-with-parent and the cgroups' janitor
        finish what is still going when this process is gone."""
        if self._closed:
            return
        self._closed = True
        self._outbox.put(None)
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.kill()
        if wait:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        self._selector.close()
        for stream in (self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError):
                stream.close()
        if wait:
            self._writer.join(timeout=5)
        if self.cgroups is not None:
            self.cgroups.close(wait=wait)
