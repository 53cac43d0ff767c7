"""Pool mode (docker): one warm container, the runner its PID 1, serves submissions one after
another and is reset between them.
"""

# ruff: noqa: SIM105 - contextlib.suppress would cost an import in every sandbox start.

import fcntl
import os
import signal

from .child import make_in_out_streams
from .factory import installed_here, reset_for_next, warm_server
from .fast import FastWorker, fast_kit, prepare, serve_job
from .protocol import EXIT_HOST_GONE, STATE, name_process, recv, send
from .run import clean_scratch

# The environment a test sees in a container: the image's variables and the engine's HOSTNAME
# are dropped (bwrap's sandboxes get these three alone too).
POOL_ENVIRONMENT = ("PATH", "HOME", "LANG")
# Writable places of a container besides /tmp, emptied between two submissions: the engine
# mounts its IPC namespace's POSIX message queue filesystem there, writable by every user
# (seccomp refuses mq_open, not open(2) on that filesystem).
POOL_SCRATCH = ("/dev/mqueue",)


def _oom_count():
    """OOM kills in this container's memory cgroup so far, as the container sees its own
    cgroup (read-only: v2's memory.events, v1's memory.oom_control); None where neither is
    readable. The files stay open and are read again from the start."""
    fds = STATE.setdefault("oom_fds", {})
    for path in ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"):
        if fds.get(path, 0) is None:
            continue  # not there: not tried again
        try:
            if path not in fds:
                fds[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            data = os.pread(fds[path], 4096, 0)
        except OSError:
            fds[path] = None
            continue
        for line in data.split(b"\n"):
            key, _, value = line.partition(b" ")
            if key == b"oom_kill" and value.strip().isdigit():
                return int(value)
    return None


def pool(in_fd, out_fd, libc):
    """Serve submissions one after another in this container (docker, whose PID 1 this runner
    is): a warm container serves a process's sandbox slot, one submission at a time, instead of
    a container started per submission. Between two submissions the runner does what it does
    between two of a bwrap group (``reset_for_next``: every other process killed and reaped,
    /tmp emptied, System V IPC objects removed, the fast mode's worker forked ahead discarded),
    empties POOL_SCRATCH, and says ``{"ready": true, "oom": count}``: the host hands the
    container its next job only after that frame (``count`` tells it whether the job before
    caused an OOM kill, after which it discards the container). The runner itself never
    executes a submission's code. While a test runs, the job stream is watched: when the host
    is gone (killed, or it closed the container) the runner exits at once, and with PID 1 every
    process of the container ends (the engine then removes it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    name_process(b"bf-runner")
    for name in list(os.environ):
        if name not in POOL_ENVIRONMENT:
            del os.environ[name]
    # As in factory(): the job stream on high descriptors, 0 and 1 empty memfds, the standard
    # streams every test inherits made once.
    in_fd, out_fd = fcntl.fcntl(in_fd, fcntl.F_DUPFD, 10), fcntl.fcntl(out_fd, fcntl.F_DUPFD, 10)
    for target in (0, 1):
        placeholder = os.memfd_create("std", 0)
        os.dup2(placeholder, target)
        os.close(placeholder)
    STATE["streams"] = make_in_out_streams()
    STATE["host_fd"] = in_fd
    # The runner installs seccomp in itself (bwrap's submission runners do too): every test
    # process and worker inherits it, and the reset needs none of the refused calls.
    seccomp = installed_here(prepare(libc))
    ready = {"ready": True, "pid1": True, "pool": True, "seccomp": seccomp is not None}
    send(out_fd, {**ready, "oom": _oom_count()})
    try:
        go = recv(in_fd)
        if go.get("warm", True):
            # What factory() warms, once per container: every job is then served warm.
            warm_server()
        while True:
            mode, _ = serve_job(in_fd, out_fd, seccomp, True)
            reset_for_next(libc)
            for path in POOL_SCRATCH:
                clean_scratch(path)
            if mode == "fast":
                # Workloads repeat: the next job's worker, forked ahead from the clean runner.
                FastWorker.prefork(seccomp, fast_kit(os.getcwd()))
            send(out_fd, {"ready": True, "oom": _oom_count()})
    except EOFError:
        pass  # the host closed the stream: the container ends with this process
    os._exit(EXIT_HOST_GONE)
