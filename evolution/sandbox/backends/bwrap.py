"""The default backend: bubblewrap namespaces + rlimits + cgroups + seccomp.

What one sandbox gets (see docs/judge.md, its security model):
- new user, PID, network, IPC, UTS, mount and cgroup namespaces (``--unshare-all``), further
  user namespaces disabled, all capabilities dropped, a new session (no terminal injection);
- a root filesystem that holds ONLY the interpreter binary, its standard library and the shared
  libraries it links, bound read-only, plus a PID-namespace-private ``/proc``, a minimal
  ``/dev`` and a size-capped tmpfs at ``/tmp`` that is the working directory;
- an empty environment (``--clearenv``) with PATH, HOME and LANG only;
- uid/gid 65534 inside; when the host process is root, the sandbox also runs as a fresh,
  random, unprivileged host uid, so RLIMIT_NPROC counts this sandbox alone and even a
  namespace escape would land without privileges;
- ``--die-with-parent``: the sandbox cannot outlive the process that judges it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import subprocess
import threading
from functools import cache

from .. import cgroups, config
from ..types import Limits, SandboxError, SandboxUnavailable
from .base import (
    PYTHON_FLAGS,
    Backend,
    ProcessSession,
    Session,
    bootstrap_command,
    disk_cached,
    interpreter_key,
)

SANDBOX_UID = 65534
# Processes one sandbox may hold at once (pids cgroup and, with a private host uid, NPROC).
PIDS_MAX = 64
# Host uids handed to sandboxes when we run as root: far above system and subuid ranges.
HOST_UID_RANGE = (1_500_000, 1_999_999)
# A warm factory serves at most this many submissions before it is replaced.
MAX_USES = 500
# Idle factories kept per process (more are started on demand, up to SANDBOX_MAX_PARALLEL).
MAX_IDLE = 8
# Memory the runner itself (a warm interpreter) needs beside the test process.
RUNNER_OVERHEAD_MB = 96


@cache
def _bwrap_features(bwrap: str) -> frozenset[str]:
    return frozenset(disk_cached("bwrap", interpreter_key(bwrap), lambda: _probe_bwrap(bwrap)))


def _probe_bwrap(bwrap: str) -> list[str]:
    try:
        text = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [f for f in ("--disable-userns", "--size") if f in text]


def _which(name: str) -> str:
    """shutil.which without importing shutil (and with it bz2 and lzma) on the CLI's path."""
    for directory in os.get_exec_path():
        path = os.path.join(directory, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return ""


def _random_host_uid() -> int:
    low, high = HOST_UID_RANGE
    return low + int.from_bytes(os.urandom(4), "big") % (high - low + 1)


@cache
def interpreter_layout(python: str) -> dict:
    """The paths the interpreter needs: its binary, stdlib dirs and shared-library dirs."""
    layout = disk_cached(
        "layout", [*interpreter_key(python), PYTHON_FLAGS], lambda: _probe_layout(python)
    )
    needed = [layout["exe"], *layout["path"], *layout["lib_dirs"]]
    if not all(os.path.exists(p) for p in needed):
        layout = _probe_layout(python)  # the installation changed under the cached answer
    return layout


def _probe_layout(python: str) -> dict:
    probe = (
        "import json, os, sys, sysconfig; print(json.dumps({'exe': os.path.realpath(sys.executable),"
        " 'path': [p for p in sys.path if os.path.isdir(p)],"
        " 'dynload': sysconfig.get_path('platstdlib')}))"
    )
    try:
        out = subprocess.run(
            [python, *PYTHON_FLAGS, "-c", probe], capture_output=True, text=True, timeout=30
        )
        layout = json.loads(out.stdout)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        raise SandboxUnavailable(f"cannot run SANDBOX_PYTHON={python!r}: {exc}") from exc
    import glob

    objects = [layout["exe"], *glob.glob(os.path.join(layout["dynload"], "lib-dynload", "*.so"))]
    lib_dirs: set[str] = set()
    try:
        ldd = subprocess.run(["ldd", *objects], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        ldd = ""
    for line in ldd.splitlines():
        for token in line.split():
            if token.startswith("/") and os.path.exists(token):
                lib_dirs.add(os.path.dirname(os.path.realpath(token)))
                # The ELF interpreter is looked up by its literal path (/lib64/ld-linux...).
                lib_dirs.add(os.path.realpath(os.path.dirname(token)))
    layout["lib_dirs"] = sorted(lib_dirs)
    return layout


class _Lease(Session):
    """One submission's use of a pooled factory session."""

    def __init__(self, backend: BwrapBackend, session: ProcessSession):
        self.backend, self.session = backend, session
        self.backend_name, self.info = session.backend_name, session.info
        self.nproc = session.nproc
        self.reusable = False
        self._closed = False

    def send(self, obj: dict) -> None:
        self.session.send(obj)

    def send_many(self, objs: list[dict]) -> None:
        self.session.send_many(objs)

    def recv(self, timeout: float) -> dict:
        frame = self.session.recv(timeout)
        if "lost" in frame:
            raise SandboxError(f"the submission's runner died (status {frame['lost']})")
        return frame

    def oom_kills(self) -> int:
        return self.session.oom_kills()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.backend._release(self.session, self.reusable)


class BwrapBackend(Backend):
    name = "bwrap"
    # Judges several submissions of one batch in one sandbox's namespaces (service.judge_group).
    groups = True
    # Whether a new factory warms itself (the modules and prelude of multi-test submissions)
    # while it serves its first submission. A one-shot command that judges one program turns
    # this off: the warming would only compete with that program for the CPU.
    warm_factories = True

    def __init__(self, *, python: str | None = None, bwrap: str | None = None):
        self.python = python or config.settings().SANDBOX_PYTHON
        self.bwrap = bwrap or _which("bwrap")
        self.setpriv = _which("setpriv")
        self._lock = threading.Condition()
        self._idle: list[ProcessSession] = []
        self._starting = 0  # factories prewarm() is starting in the background
        self._pid = os.getpid()
        atexit.register(self.shutdown, wait=False)
        if not self.bwrap:
            raise SandboxUnavailable(
                "bubblewrap (bwrap) is not installed; install it (apt-get install bubblewrap), "
                "or choose SANDBOX_BACKEND=docker; the unsafe backend is never chosen for you"
            )

    def _mount_args(self, limits: Limits) -> list[str]:
        layout = interpreter_layout(self.python)
        args: list[str] = []
        bound: list[str] = []

        def bind(path: str) -> None:
            real = os.path.realpath(path)
            if any(real == b or real.startswith(b + "/") for b in bound):
                return
            bound.append(real)
            args.extend(["--ro-bind", real, real])

        bind(layout["exe"])
        for path in layout["path"]:
            bind(path)
        for path in layout["lib_dirs"]:
            if os.path.islink(path) or os.path.realpath(path) != path:
                continue
            bind(path)
        # Merged-/usr systems: /lib64 -> usr/lib64 must exist as a symlink for the ELF
        # interpreter's literal path to resolve.
        for top in ("/lib", "/lib64", "/bin"):
            if os.path.islink(top):
                args.extend(["--symlink", os.readlink(top), top])
        if os.path.exists("/etc/ld.so.cache"):
            args.extend(["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"])
        features = _bwrap_features(self.bwrap)
        if "--size" in features:
            args.extend(["--size", str(limits.memory_mb * 1024 * 1024)])
        # /dev read-only: it is shared by the submissions a factory serves (each gets its own
        # /tmp, /dev/shm and /proc, mounted by the runner).
        args.extend(["--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev"])
        # The root itself is a tmpfs that bwrap builds (owned by the sandbox's uid): read-only
        # too, or it would be scratch that outlives a submission.
        args.extend(["--remount-ro", "/", "--chdir", "/tmp"])
        return args

    def argv(self, limits: Limits) -> list[str]:
        layout = interpreter_layout(self.python)
        args = [
            self.bwrap,
            "--unshare-all",
            "--unshare-user",
            "--uid",
            str(SANDBOX_UID),
            "--gid",
            str(SANDBOX_UID),
            "--hostname",
            "sandbox",
            "--as-pid-1",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--clearenv",
            "--setenv",
            "PATH",
            "/usr/bin:/bin",
            "--setenv",
            "HOME",
            "/tmp",
            "--setenv",
            "LANG",
            "C.UTF-8",
        ]
        # No --disable-userns: the runner creates a fresh user namespace per submission. Test
        # processes cannot: seccomp refuses unshare, setns, clone with namespace flags, clone3.
        args += self._mount_args(limits)
        args += [*bootstrap_command(layout["exe"])[0], "factory"]
        if os.geteuid() == 0 and self.setpriv:
            # Drop to a fresh unprivileged host uid before bwrap starts. setpriv does it rather
            # than Popen(user=...), which would force a full fork() of this (large) process.
            uid = str(_random_host_uid())
            args = [self.setpriv, "--reuid", uid, "--regid", uid, "--clear-groups", "--", *args]
        return args

    def popen_kwargs(self) -> dict:
        kwargs: dict = {"cwd": "/", "env": {}, "start_new_session": True, "close_fds": True}
        if os.geteuid() == 0 and not self.setpriv:
            uid = _random_host_uid()
            kwargs.update(user=uid, group=uid, extra_groups=[])
        return kwargs

    @staticmethod
    def _cgroup_set() -> cgroups.CgroupSet:
        return cgroups.CgroupSet(
            memory_bytes=(512 + RUNNER_OVERHEAD_MB) * 1024 * 1024, pids_max=PIDS_MAX
        )

    def _spawn(self, cgroup_set: cgroups.CgroupSet | None = None) -> ProcessSession:
        """A factory's process tree, started (not yet ready: see _finish)."""
        if cgroup_set is None:
            cgroup_set = self._cgroup_set()
        return ProcessSession(
            self.argv(Limits()),
            popen_kwargs=self.popen_kwargs(),
            cgroups=cgroup_set,
            preamble=bootstrap_command(interpreter_layout(self.python)["exe"])[1],
            handshake=False,
        )

    def _finish(self, session: ProcessSession) -> ProcessSession:
        """Wait until a spawned factory is ready and in its cgroups, then let it go on."""
        session.handshake()
        # Placed in its cgroups: the factory may now fork.
        session.send({"go": True, "warm": self.warm_factories})
        session.backend_name = self.name
        # With a private host uid, RLIMIT_NPROC bounds this sandbox alone.
        session.nproc = PIDS_MAX if os.geteuid() == 0 else None
        return session

    def _start(self) -> ProcessSession:
        return self._finish(self._spawn())

    def open(self, *, limits: Limits) -> Session:
        """A sandbox for ONE submission. Its namespaces, scratch and processes are fresh; the
        bwrap process and warm interpreter that create them come from a pool (see inside/factory.py,
        factory mode) and return to it only after a clean, complete job."""
        with self._lock:
            if self._pid != os.getpid():  # a forked worker must not share its parent's pool
                self._idle, self._pid, self._starting = [], os.getpid(), 0
            session = None
            while session is None:
                if self._idle:
                    candidate = self._idle.pop()
                    if candidate.proc.poll() is None:
                        session = candidate
                    else:
                        candidate.close()
                elif self._starting:
                    # A factory prewarm() is starting will be ready sooner than a new one.
                    self._lock.wait()
                else:
                    break
        if session is None:
            session = self._start()
        lease = _Lease(self, session)
        self.set_limits(lease, limits)
        return lease

    def set_limits(self, lease: _Lease, limits: Limits) -> None:
        """The memory cgroup sized for the submission about to run (one of a group, see
        service.SandboxGroup, or the lease's first)."""
        if lease.session.cgroups is not None:
            lease.session.cgroups.set_memory((limits.memory_mb + RUNNER_OVERHEAD_MB) * 1024 * 1024)

    def _release(self, session: ProcessSession, reusable: bool) -> None:
        session.uses = getattr(session, "uses", 0) + 1
        if reusable and session.uses < MAX_USES and session.proc.poll() is None:
            with self._lock:
                if self._pid == os.getpid() and len(self._idle) < MAX_IDLE:
                    self._idle.append(session)
                    return
        session.close()

    def prewarm(self, count: int = 1, *, wait: bool = True) -> None:
        """Start ``count`` factories into the idle pool (a worker's first job then only forks),
        all at once: each is spawned here, and waited for (its interpreter starting, its
        warming) in a thread of its own. ``wait=False`` returns once they are spawned: they
        get ready while the caller goes on (the judge's command line reads its jobs
        meanwhile), and ``open`` waits for one of them rather than starting another. A factory
        that fails to start is left out; ``open`` then starts one itself, and reports why if
        that fails too."""
        count = max(0, min(count, MAX_IDLE))
        with self._lock:
            self._starting += count
        # Every factory's cgroups first: making one waits for the kernel while a process is
        # being moved into another (the first factory's, right after it is spawned).
        sets = [self._cgroup_set() for _ in range(count)]
        threads = []
        for cgroup_set in sets:
            try:
                session = self._spawn(cgroup_set)
            except Exception:  # SandboxError, SandboxUnavailable: open() meets it again
                session = None
            threads.append(
                threading.Thread(
                    target=self._prewarm_one, args=(session,), name="sandbox-prewarm", daemon=True
                )
            )
            threads[-1].start()
        if wait:
            for thread in threads:
                thread.join()

    def _prewarm_one(self, session: ProcessSession | None) -> None:
        try:
            if session is not None:
                session = self._finish(session)
        except Exception:
            session.close()
            session = None
        with self._lock:  # pooled before a waiting open() looks again
            if session is not None:
                self._release(session, True)
            self._starting -= 1
            self._lock.notify_all()

    def shutdown(self, *, wait: bool = True) -> None:
        """Stop the idle factories. ``wait=False`` at interpreter exit: they are killed and
        not waited for (see ProcessSession.close), which would add the kernel's teardown of
        their namespaces to every judging command's run."""
        with self._lock:
            idle, self._idle = self._idle, []
        # Every factory is told to die first, then each is waited for: they go down together.
        for session in idle:
            if session.proc.poll() is None:
                with contextlib.suppress(OSError):
                    session.proc.kill()
        for session in idle:
            session.close(wait=wait)

    def describe(self) -> dict:
        return {
            "backend": self.name,
            "bwrap": self.bwrap,
            "python": self.python,
            "cgroups": cgroups.available(),
            "features": sorted(_bwrap_features(self.bwrap)),
        }
