"""The runner's side of a fork per test: scratch and descriptor hygiene, output capped and
streamed, every process of the namespace reaped after a test (``run_one``).
"""

# ruff: noqa: SIM105 - contextlib.suppress would cost an import in every sandbox start.

import os
import select
import signal
import time

from .child import child_main, classify, precompiled_test
from .protocol import (
    EXIT_INTERNAL,
    STATE,
    STDERR_KEEP,
    STREAM_CHUNK,
    exit_if_host_gone,
    ignore,
    send,
)


def memfd(name, data=b""):
    fd = os.memfd_create(name, 0)
    if data:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    return fd


def read_capped(fd, cap):
    size = os.fstat(fd).st_size
    os.lseek(fd, 0, os.SEEK_SET)
    data = b""
    want = min(size, cap)
    while len(data) < want:
        chunk = os.read(fd, want - len(data))
        if not chunk:
            break
        data += chunk
    return data, size


def _stream_capped(fd, cap, out_fd, index):
    """Send the first ``cap`` bytes of ``fd`` to the host as ``{"i": index, "chunk": base64}``
    frames, STREAM_CHUNK bytes at a time (never the whole file in memory); returns its size."""
    import binascii  # built into the interpreter; only a streamed run needs it

    size = os.fstat(fd).st_size
    want, offset = min(size, cap), 0
    while offset < want:
        data = os.pread(fd, min(STREAM_CHUNK, want - offset), offset)
        if not data:
            break
        text = binascii.b2a_base64(data, newline=False).decode("ascii")
        send(out_fd, {"i": index, "chunk": text})
        offset += len(data)
    return size


def clip_stderr(data):
    text = data.decode("utf-8", "replace")
    if len(text) > STDERR_KEEP:
        text = text[:2048] + "\n...[truncated]...\n" + text[-(STDERR_KEEP - 2048) :]
    return text


def reap_everything(is_pid1, pgid):
    """Kill what the test left behind (daemons included) and wait until it is all gone.
    ``pgid`` None: no test's process group to start with (everything is killed anyway)."""
    if pgid is not None:
        ignore(os.killpg, pgid, signal.SIGKILL)
    while True:
        if is_pid1:
            # PID 1 of a namespace: -1 reaches every other process in it, never us.
            ignore(os.kill, -1, signal.SIGKILL)
        else:
            for pid in _children_of(os.getpid()):
                ignore(os.kill, pid, signal.SIGKILL)
        try:
            pid, _ = os.waitpid(-1, 0 if is_pid1 else os.WNOHANG)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if pid == 0:
            time.sleep(0.001)


def _children_of(parent):
    """PIDs whose parent is ``parent`` (orphans adopted by a subreaper included)."""
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            found.append(int(name))
    return found


def tmpfs_empty(path):
    """The size ``path`` (this sandbox's /tmp or /dev/shm) shows when empty, probed once per
    process on the emptied directory (see _tmpfs_empty_size); None where a directory's size
    does not count its entries."""
    sizes = STATE.setdefault("tmpfs_empty", {})
    if path not in sizes:
        clean_scratch(path)
        sizes[path] = _tmpfs_empty_size(path)
    return sizes[path]


def clean_if_used(path, empty, stat=os.stat):
    """Empty ``path`` unless its size is ``empty`` (the size it shows when empty, or None when
    its size says nothing): one stat instead of a listing, after most tests. ``stat`` is bound
    here: a fast-mode test that replaces ``os.stat`` cannot make its leftovers look gone."""
    try:
        used = empty is None or stat(path).st_size != empty
    except OSError:
        used = True
    if used:
        clean_scratch(path)


def clean_tmpfs(path):
    """Empty ``path``, a tmpfs of this sandbox, with one stat when it is empty already."""
    clean_if_used(path, tmpfs_empty(path))


def clean_scratch(scratch):
    """Empty ``scratch`` (symbolic links are removed, never followed). A directory a test made
    read-only is made writable first. No shutil: it would import bz2 and lzma in the sandbox."""
    try:
        entries = list(os.scandir(scratch))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                ignore(os.chmod, entry.path, 0o700)
                clean_scratch(entry.path)
                os.rmdir(entry.path)
            else:
                os.unlink(entry.path)
        except (OSError, RecursionError):
            pass


def run_one(job, compiled, test_input, seccomp, is_pid1, scratch, out_fd=None, index=0):
    """Run one test in a forked child; its outcome frame (without ``"i"``). With the job's
    ``stream_stdout`` and ``out_fd``, its stdout is sent first as ``chunk`` frames for test
    ``index`` and the outcome's ``"stdout"`` is empty."""
    cap = int(job["max_output_bytes"])
    fds = (
        memfd("stdin", test_input.encode() if job["harness"] == "stdio" else b""),
        memfd("stdout"),
        memfd("stderr"),
        memfd("result"),
    )
    started = time.monotonic()
    # Forked dumpable, the test process can name itself and ask to be the OOM victim through
    # its own /proc files, without ctypes calls (their first use in a fresh child costs a
    # quarter of a trivial test). Safe: nothing of the submission runs now (the last test's
    # processes are all reaped), and the runner is non-dumpable again right after the fork,
    # before the test process may go on: it waits on ``go`` for the runner's word, so that not
    # one instruction of the submission runs while the runner's /proc files are open to it.
    libc = STATE.get("libc") if is_pid1 else None
    test_code = precompiled_test(job, test_input)
    go = None
    if libc is not None:
        go = os.pipe()
        libc.prctl(4, 1, 0, 0, 0)
    pid = os.fork()
    if pid == 0:
        child_main(job, compiled, test_input, fds, seccomp, go, test_code)
    if go is not None:
        libc.prctl(4, 0, 0, 0, 0)
        os.close(go[0])
        ignore(os.write, go[1], b"\0")
        os.close(go[1])
    status = None
    timed_out = False
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        pidfd = None
    deadline = started + float(job["time_s"])
    watch = STATE.get("host_fd")
    while status is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        if pidfd is not None:
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            if watch is None:
                poller.poll(max(1, int(remaining * 1000) + 1))
            else:
                poller.register(watch, 0)
                exit_if_host_gone(poller.poll(max(1, int(remaining * 1000) + 1)), watch)
            done_pid, raw, usage = os.wait4(pid, os.WNOHANG)
        else:
            done_pid, raw, usage = os.wait4(pid, os.WNOHANG)
            if done_pid == 0:
                time.sleep(min(0.002, remaining))
        if done_pid == pid:
            status = raw
    elapsed = time.monotonic() - started
    if timed_out:
        ignore(os.killpg, pid, signal.SIGKILL)
        _, status, usage = os.wait4(pid, 0)
    if pidfd is not None:
        os.close(pidfd)
    reap_everything(is_pid1, pid)
    if is_pid1:
        clean_tmpfs(scratch)
    else:
        clean_scratch(scratch)

    if job.get("stream_stdout") and out_fd is not None:
        stdout, out_size = b"", _stream_capped(fds[1], cap, out_fd, index)
    else:
        stdout, out_size = read_capped(fds[1], cap)
    stderr, err_size = read_capped(fds[2], STDERR_KEEP * 4)
    result, _ = read_capped(fds[3], cap)
    for fd in fds:
        os.close(fd)

    exit_code = os.waitstatus_to_exitcode(status)
    term_signal = -exit_code if exit_code < 0 else 0
    cpu_s = usage.ru_utime + usage.ru_stime
    state = classify(timed_out, term_signal, out_size, err_size, cap, exit_code, stderr)
    return {
        "status": state,
        "stdout": (result if job["harness"] == "function" else stdout).decode("utf-8", "replace"),
        "stderr": clip_stderr(stderr),
        "time_ms": round(elapsed * 1000, 3),
        "cpu_ms": round(cpu_s * 1000, 3),
        "memory_kb": usage.ru_maxrss,
        "exit_code": exit_code,
        "signal": term_signal,
        "internal": exit_code == EXIT_INTERNAL,
    }


def _tmpfs_empty_size(path):
    """The size an empty ``path`` reports when that size counts its entries (tmpfs: 20 bytes
    per entry), checked by creating one; None elsewhere (then the directory is listed)."""
    probe = os.path.join(path, ".bf-probe")
    try:
        empty = os.stat(path).st_size
        os.close(os.open(probe, os.O_CREAT | os.O_WRONLY, 0o600))
        try:
            grew = os.stat(path).st_size != empty
        finally:
            os.unlink(probe)
        if grew and os.stat(path).st_size == empty:
            return empty
    except OSError:
        pass
    return None
