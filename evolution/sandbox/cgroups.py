"""Per-sandbox memory and pids limits through cgroups, where a writable hierarchy exists.

Each sandbox gets its own cgroup nested UNDER the cgroup this process already lives in (never
beside it: a sandbox must stay inside whatever limits the operator gave the application).
cgroup v1 (separate ``memory`` and ``pids`` hierarchies) and v2 (one unified hierarchy with
the controllers delegated) are both supported. When neither is writable the rlimits inside the
sandbox still apply; ``available()`` says which case holds.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import threading
import time
from collections import namedtuple
from functools import cache

PREFIX = "bf-sandbox-"
_counter = itertools.count()


# version 1 or 2; controller "memory", "pids" or "unified"; base: the directory of our own
# cgroup in this hierarchy.
_Hierarchy = namedtuple("_Hierarchy", ("version", "controller", "base"))


def _read_text(path: str) -> str:
    with open(path) as source:
        return source.read()


def _own_paths() -> dict[str, str]:
    paths: dict[str, str] = {}
    try:
        lines = _read_text("/proc/self/cgroup").splitlines()
    except OSError:
        return paths
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            paths["unified"] = path
        for name in controllers.split(","):
            paths[name] = path
    return paths


def _mounts() -> list[tuple[str, str, set[str]]]:
    found = []
    try:
        lines = _read_text("/proc/self/mounts").splitlines()
    except OSError:
        return found
    for line in lines:
        parts = line.split()
        if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
            found.append((parts[1], parts[2], set(parts[3].split(","))))
    return found


def _writable(base: str) -> bool:
    probe = os.path.join(base, f"{PREFIX}probe-{os.getpid()}-{next(_counter)}")
    try:
        os.mkdir(probe)
        os.rmdir(probe)
        return True
    except OSError:
        return False


def _sweep(base: str) -> None:
    """Remove cgroups left by sandboxes of processes that no longer exist (killed hosts)."""
    with contextlib.suppress(OSError):
        for name in os.listdir(base):
            if not name.startswith(PREFIX) or name.startswith(PREFIX + "probe"):
                continue
            owner = name[len(PREFIX) :].split("-", 1)[0]
            if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
                _remove(os.path.join(base, name))


@cache
def _hierarchies() -> tuple[_Hierarchy, ...]:
    own = _own_paths()
    result: list[_Hierarchy] = []
    for mount, kind, options in _mounts():
        if kind == "cgroup":
            for controller in ("memory", "pids"):
                if controller in options and controller in own:
                    base = os.path.join(mount, own[controller].lstrip("/"))
                    if _writable(base):
                        _sweep(base)
                        result.append(_Hierarchy(1, controller, base))
        elif kind == "cgroup2" and "unified" in own:
            base = os.path.join(mount, own["unified"].lstrip("/"))
            try:
                delegated = set(_read_text(os.path.join(base, "cgroup.subtree_control")).split())
            except OSError:
                continue
            if {"memory", "pids"} <= delegated and _writable(base):
                _sweep(base)
                result.append(_Hierarchy(2, "unified", base))
    # v2 carries both controllers; when it is usable, prefer it alone.
    unified = [h for h in result if h.version == 2]
    return tuple(unified or result)


def available() -> list[str]:
    """Names of the cgroup controllers sandboxes get, e.g. ["memory (v1)", "pids (v1)"]."""
    out = []
    for h in _hierarchies():
        out += ["memory (v2)", "pids (v2)"] if h.version == 2 else [f"{h.controller} (v1)"]
    return out


def _write(path: str, value: str) -> None:
    with contextlib.suppress(OSError), open(path, "w") as target:
        target.write(value)


def _read_int(path: str, key: str | None = None) -> int | None:
    try:
        text = _read_text(path)
    except OSError:
        return None
    return _int_in(text, key)


def _int_in(text: str, key: str | None) -> int | None:
    """The integer a cgroup file holds (``key`` None), or ``key``'s in a flat-keyed one."""
    if key is None:
        text = text.strip()
        return int(text) if text.isdigit() else None
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key and parts[1].isdigit():
            return int(parts[1])
    return None


def _remove(path: str) -> None:
    for _ in range(50):
        try:
            pids = [int(p) for p in _read_text(os.path.join(path, "cgroup.procs")).split()]
        except (OSError, ValueError):
            pids = []
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)


# A process killed with SIGKILL (or ending with os._exit, as Celery's pool children do) never
# removes its sandboxes' cgroups, and one that exits normally leaves those whose last
# processes are still being torn down. A detached janitor, started once per process, waits for
# it to die and removes what it left; a restart in the same cgroup would also sweep them
# (``_sweep``). A shell script: a Python janitor would cost the start of every judging process
# an interpreter's start-up of CPU. ``tail --pid`` waits without spawning anything.
JANITOR = """
tail --pid="$1" -f /dev/null 2>/dev/null || while kill -0 "$1" 2>/dev/null; do sleep 1; done
prefix=$2
shift 2
tries=0
while [ "$tries" -lt 150 ]; do
    left=0
    for base in "$@"; do
        for dir in "$base/$prefix"*; do
            [ -d "$dir" ] || continue
            rmdir "$dir" 2>/dev/null || left=1
        done
    done
    [ "$left" -eq 0 ] && break
    tries=$((tries + 1))
    sleep 0.2
done
"""
_janitor_pid = 0


def _ensure_janitor() -> None:
    global _janitor_pid
    if _janitor_pid == os.getpid() or not _hierarchies():
        return
    _janitor_pid = os.getpid()
    bases = [h.base for h in _hierarchies()]
    import subprocess

    with contextlib.suppress(OSError):
        subprocess.Popen(
            [
                "/bin/sh",
                "-c",
                JANITOR,
                "janitor",
                str(os.getpid()),
                f"{PREFIX}{os.getpid()}-",
                *bases,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            # The C locale: tail would otherwise load a dozen locale files as it starts.
            env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
        )


class CgroupSet:
    """The cgroups of one sandbox. ``add`` moves a process in; ``close`` removes them."""

    _lock = threading.Lock()

    def __init__(self, *, memory_bytes: int, pids_max: int):
        self.dirs: list[tuple[_Hierarchy, str]] = []
        self._memory = memory_bytes
        self._fds: dict[str, int] = {}  # counter files kept open (oom_kills)
        with self._lock:
            _ensure_janitor()
        name = f"{PREFIX}{os.getpid()}-{next(_counter)}"
        for h in _hierarchies():
            path = os.path.join(h.base, name)
            try:
                os.mkdir(path)
            except OSError:
                continue
            self.dirs.append((h, path))
            if h.version == 2:
                _write(os.path.join(path, "memory.max"), str(memory_bytes))
                _write(os.path.join(path, "memory.swap.max"), "0")
                _write(os.path.join(path, "pids.max"), str(pids_max))
            elif h.controller == "memory":
                _write(os.path.join(path, "memory.limit_in_bytes"), str(memory_bytes))
                # memsw must be set after (and at least) limit_in_bytes; absent without swap
                # accounting, in which case the plain limit already covers everything.
                _write(os.path.join(path, "memory.memsw.limit_in_bytes"), str(memory_bytes))
            else:
                _write(os.path.join(path, "pids.max"), str(pids_max))

    @property
    def active(self) -> bool:
        return bool(self.dirs)

    def add(self, pid: int) -> None:
        """Move ``pid`` into every cgroup of the set where it is not already (a process forked
        by one inside is). The first move after a quiet spell costs the kernel a grace period
        (milliseconds to tens of them on a loaded host), so moves are skipped when needless."""
        missing = self._missing(pid)
        for _, path in self.dirs:
            if path in missing:
                _write(os.path.join(path, "cgroup.procs"), str(pid))

    def _missing(self, pid: int) -> set[str]:
        """Paths of the set's cgroups ``pid`` is not in (all of them when that is unknown)."""
        wanted = {path: os.path.basename(path) for _, path in self.dirs}
        try:
            lines = _read_text(f"/proc/{pid}/cgroup").splitlines()
        except OSError:
            return set(wanted)
        inside = set()
        for h, path in self.dirs:
            controller = "" if h.version == 2 else h.controller
            for line in lines:
                _, controllers, where = line.split(":", 2)
                if controller in controllers.split(",") and where.endswith("/" + wanted[path]):
                    inside.add(path)
        return set(wanted) - inside

    def set_memory(self, memory_bytes: int) -> None:
        """Change the memory limit between two submissions of a reused sandbox."""
        if getattr(self, "_memory", None) == memory_bytes:
            return  # a write to the limit makes the kernel reclaim; skip when unchanged
        self._memory = memory_bytes
        for h, path in self.dirs:
            if h.version == 2:
                _write(os.path.join(path, "memory.max"), str(memory_bytes))
            elif h.controller == "memory":
                # Raising needs memsw first, lowering needs the plain limit first.
                for name in ("memory.memsw.limit_in_bytes", "memory.limit_in_bytes") * 2:
                    _write(os.path.join(path, name), str(memory_bytes))

    def oom_kills(self) -> int:
        """OOM kills in the set's memory cgroup so far (read before and after every
        submission: its file stays open and is read again from the start)."""
        total = 0
        for h, path in self.dirs:
            if h.version == 2:
                total += self._counter(os.path.join(path, "memory.events"), "oom_kill") or 0
            elif h.controller == "memory":
                count = self._counter(os.path.join(path, "memory.oom_control"), "oom_kill")
                total += (
                    count
                    if count is not None
                    else (_read_int(os.path.join(path, "memory.failcnt")) or 0)
                )
        return total

    def _counter(self, path: str, key: str) -> int | None:
        """``key``'s value in the flat-keyed file ``path``, through a descriptor kept open."""
        try:
            if path not in self._fds:
                self._fds[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            data = os.pread(self._fds[path], 65536, 0)
        except OSError:
            return None
        return _int_in(data.decode(), key)

    def peak_kb(self) -> int | None:
        for h, path in self.dirs:
            if h.version == 2:
                value = _read_int(os.path.join(path, "memory.peak"))
            elif h.controller == "memory":
                value = _read_int(os.path.join(path, "memory.max_usage_in_bytes"))
            else:
                continue
            if value is not None:
                return value // 1024
        return None

    def close(self, *, wait: bool = True) -> None:
        """Remove the cgroups. ``wait=False`` (this process is exiting): try once, and leave
        what is still in use to the janitor, which removes it once this process is gone."""
        fds, self._fds = self._fds, {}
        for fd in fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        for _, path in self.dirs:
            if wait:
                _remove(path)
            else:
                with contextlib.suppress(OSError):
                    os.rmdir(path)
        self.dirs = []
