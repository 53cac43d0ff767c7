"""Factory mode (bwrap): a fresh set of user/PID/mount/IPC/UTS namespaces with fresh /tmp,
/dev/shm and /proc per submission, forked from one warm runner.
"""

# ruff: noqa: SIM105 - contextlib.suppress would cost an import in every sandbox start.

import fcntl
import os
import signal

from .child import PRELUDE_CACHE, make_in_out_streams
from .fast import FastWorker, descriptor_counter, prepare, prepare_fast, serve_job, warm
from .protocol import (
    EXIT_HOST_GONE,
    EXIT_INTERNAL,
    STATE,
    ignore,
    name_process,
    recv,
    send,
    write_file,
)
from .run import clean_tmpfs, reap_everything
from .seccomp import (
    CLONE_NEWIPC,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUSER,
    CLONE_NEWUTS,
    seccomp_program,
)

MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000


def _check(libc, result, what):
    if result != 0:
        import ctypes

        raise OSError(ctypes.get_errno(), f"{what} failed")


def _enter_fresh_namespaces(libc):
    """In the middle process: new user, PID, mount, IPC and UTS namespaces, same uid/gid."""
    uid, gid = os.getuid(), os.getgid()
    # /proc/self/*_map are writable only by a dumpable process; the submission's PID 1 turns
    # dumpability off again before any untrusted code exists.
    libc.prctl(4, 1, 0, 0, 0)
    flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS
    _check(libc, libc.unshare(flags), "unshare")
    write_file("/proc/self/setgroups", b"deny")
    write_file("/proc/self/uid_map", f"{uid} {uid} 1".encode())
    write_file("/proc/self/gid_map", f"{gid} {gid} 1".encode())


def _fresh_mounts_and_drop_privileges(libc):
    """In the submission's PID 1: private scratch, /dev/shm and /proc, then no capabilities."""
    import ctypes

    _check(libc, libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount private")
    for target, options in (
        (b"/tmp", b"size=256m,mode=1777"),
        (b"/dev/shm", b"size=64m,mode=1777"),
    ):
        if os.path.isdir(target):
            flags = MS_NOSUID | MS_NODEV | (MS_NOEXEC if target == b"/dev/shm" else 0)
            _check(libc, libc.mount(b"tmpfs", target, b"tmpfs", flags, options), "mount tmpfs")
    _check(
        libc,
        libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None),
        "mount proc",
    )
    os.chdir("/tmp")
    libc.sethostname(b"sandbox", 7)
    for cap in range(64):
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP (EINVAL past the last cap: ignored)
    libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT_CLEAR_ALL
    header, data = _capset_empty()
    _check(libc, libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")
    _check(libc, libc.prctl(38, 1, 0, 0, 0), "no_new_privs")


def _capset_empty():
    """capset's arguments for "no capabilities", made once per factory (defining ctypes
    structures in every submission's runner costs it more than the rest of its set-up)."""
    if "capset" not in STATE:
        import ctypes

        class Header(ctypes.Structure):
            _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

        class Data(ctypes.Structure):
            _fields_ = [(n, ctypes.c_uint32) for n in ("effective", "permitted", "inheritable")]

        STATE["capset"] = (Header(0x20080522, 0), (Data * 2)())
    return STATE["capset"]


IPC_RMID = 0


def _remove_ipc_objects(libc):
    """Remove every System V shared memory segment and semaphore set of this IPC namespace
    (message queues are refused by seccomp). Test processes run as the runner's uid, so it
    owns what they made."""
    tables = STATE.setdefault("ipc_tables", {})
    for table, remove in (
        ("/proc/sysvipc/shm", lambda ident: libc.shmctl(ident, IPC_RMID, None)),
        ("/proc/sysvipc/sem", lambda ident: libc.semctl(ident, 0, IPC_RMID)),
    ):
        try:
            # Kept open and read again from the start: one system call per table and
            # submission (a test cannot reach the runner's descriptors).
            if table not in tables:
                tables[table] = os.open(table, os.O_RDONLY | os.O_CLOEXEC)
            rows = os.pread(tables[table], 1 << 20, 0).decode().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 1 and fields[1].isdigit():
                remove(int(fields[1]))


def reset_for_next(libc):
    """Between two submissions of one group in the same namespaces (the host groups
    consecutive submissions of one batch, see service.judge_group): what a submission's tests
    may leave is gone before the next one starts. Every process but this runner is killed and
    reaped, /tmp and /dev/shm are emptied, System V shared memory and semaphores removed, and
    the fast mode's worker forked ahead is discarded. The runner itself never executes a
    submission's code; what stays shared is listed in docs/judge.md ("Groups")."""
    FastWorker.discard_prefork()
    reap_everything(True, None)
    for path in ("/tmp", "/dev/shm"):
        clean_tmpfs(path)
    if libc is not None:
        _remove_ipc_objects(libc)
    os.chdir("/tmp")


def _filtered():
    """What a child calls to install seccomp when it inherited the filter already."""
    return True


def installed_here(seccomp):
    """Install the seccomp filter in this submission's runner itself, once: every test process
    and worker it forks inherits it, as if each had installed it, without running the
    installation (ctypes calls in a freshly forked interpreter: a fifth of a trivial test's
    CPU) per fork. The runner needs none of the refused calls after its mounts. Returns what
    the children call instead (None: no filter on this machine)."""
    if seccomp is None:
        return None
    if not seccomp():
        raise OSError("cannot install the seccomp filter in the submission's runner")
    return _filtered


class _Prepared:
    """One submission's sandbox, set up ahead of its job: a middle process in fresh user, PID,
    mount, IPC and UTS namespaces whose child (the submission's PID 1) mounts its private
    /tmp, /dev/shm and /proc, drops every privilege, then waits for its turn on the job
    stream. ``close_in_child``: descriptors of other submissions it must not hold."""

    def __init__(self, libc, in_fd, out_fd, close_in_child, fast=False):
        turn_r, self.turn_w = os.pipe()
        self.finished_r, finished_w = os.pipe()
        self.middle = os.fork()
        if self.middle == 0:
            for fd in (*close_in_child, self.turn_w, self.finished_r):
                ignore(os.close, fd)
            try:
                name_process(b"bf-middle")
                _enter_fresh_namespaces(libc)
                submission = os.fork()
                if submission == 0:
                    try:
                        name_process(b"bf-runner")
                        _fresh_mounts_and_drop_privileges(libc)
                        seccomp = installed_here(prepare(libc))
                        fast = fast and "layer" in PRELUDE_CACHE
                        if fast:
                            # The fast mode's snapshot, while the submission before runs.
                            kit = prepare_fast(os.getcwd())
                        # Objects made so far stay out of the cyclic collector's reach in the
                        # processes forked from here: its passes would otherwise write to (and
                        # so copy) every page they live on.
                        __import__("gc").freeze()
                        if fast:
                            FastWorker.prefork(seccomp, kit)
                        if not os.read(turn_r, 1):  # the factory stopped before our turn
                            os._exit(EXIT_HOST_GONE)
                        os.close(turn_r)
                        mode, more = serve_job(in_fd, out_fd, seccomp, True)
                        while more:
                            # The next submission of the same group, in these namespaces,
                            # once nothing of this one is left (see reset_for_next).
                            reset_for_next(libc)
                            mode, more = serve_job(in_fd, out_fd, seccomp, True)
                        # The stream is free for the next submission; our namespaces are torn
                        # down after this, while it runs. "f": this one ran in fast mode.
                        os.write(finished_w, b"f" if mode == "fast" else b"x")
                        os._exit(0)
                    except EOFError:
                        os._exit(EXIT_HOST_GONE)
                    except BaseException as exc:
                        ignore(os.write, 2, f"submission runner failed: {exc!r}\n".encode())
                        os._exit(EXIT_INTERNAL)
                os.close(turn_r)
                os.close(finished_w)
                _, status = os.waitpid(submission, 0)
                os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
            except BaseException as exc:
                ignore(os.write, 2, f"namespace setup failed: {exc!r}\n".encode())
                os._exit(EXIT_INTERNAL)
        os.close(turn_r)
        os.close(finished_w)

    def fds(self):
        return [fd for fd in (self.turn_w, self.finished_r) if fd is not None]

    def start(self):
        os.write(self.turn_w, b"x")
        os.close(self.turn_w)
        self.turn_w = None

    def wait_finished(self):
        """b"f" (fast mode) or b"x" when the submission released the job stream after a
        complete job; b"" when it did not."""
        while True:
            try:
                return os.read(self.finished_r, 1)
            except InterruptedError:
                continue

    def alive(self):
        """Whether the middle process still runs, that is, the runner it set up still waits
        for its turn (a failed set-up ends both at once)."""
        try:
            return os.waitpid(self.middle, os.WNOHANG)[0] == 0
        except ChildProcessError:
            return False

    def reap(self):
        """Wait until the middle process (and with it the namespaces) is gone; its exit code."""
        for fd in self.fds():
            ignore(os.close, fd)
        self.turn_w = self.finished_r = None
        try:
            _, status = os.waitpid(self.middle, 0)
        except ChildProcessError:
            return EXIT_INTERNAL
        return os.waitstatus_to_exitcode(status)


def warm_server():
    """Warm a process that serves many submissions (a factory, a pool container's runner):
    what test processes import to report an error, the modules and prelude of multi-test
    submissions, the fast mode's kernel check; then keep what exists out of the collector's
    reach in everything forked from here."""
    try:
        __import__("traceback")
        warm()
        STATE["counters"] = descriptor_counter()
    except Exception:
        pass
    __import__("gc").freeze()


def factory(in_fd, out_fd, libc):
    """Serve submissions one after another, each in its own user, PID, mount and IPC namespace
    with its own scratch tmpfs: a fresh sandbox per submission, created by fork (~ms) instead
    of by starting bwrap and an interpreter (~30-60 ms). Setting up the next submission's
    namespaces and tearing down the last one's (the kernel's share of the cost, tens of ms on a
    loaded host) both happen while a submission runs, not between two."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    libc.prctl(4, 0, 0, 0, 0)
    name_process(b"bf-factory")
    # The job stream moves to high descriptors, and 0 and 1 become empty memfds, as in a test
    # process: the standard input and output made here for every test to inherit then probe
    # the same kind of file a test's own streams are on (seekable), and no process of the
    # sandbox holds the job stream at 0 or 1 by accident. Descriptor 2 stays the host's, for
    # diagnostics (so each test makes its own standard error).
    in_fd, out_fd = fcntl.fcntl(in_fd, fcntl.F_DUPFD, 10), fcntl.fcntl(out_fd, fcntl.F_DUPFD, 10)
    for target in (0, 1):
        placeholder = os.memfd_create("std", 0)
        os.dup2(placeholder, target)
        os.close(placeholder)
    STATE["streams"] = make_in_out_streams()
    send(out_fd, {"ready": True, "pid1": True, "seccomp": seccomp_program() is not None})
    # Fork nothing before the host has moved us into the sandbox's cgroups: a process forked
    # earlier would stay outside them (its limits and accounting).
    go = recv(in_fd)
    if not go.get("go"):
        return
    # Every test process sets its limits with resource: imported once here, as are the
    # seccomp filter and capset's arguments every submission's runner uses.
    import resource  # noqa: F401

    prepare(libc)
    _capset_empty()
    signal.signal(signal.SIGINT, signal.SIG_DFL)

    if go.get("warm", True):
        # Before the first submission's sandbox is made (and only for a factory that will
        # serve more than one, see BwrapBackend.warm_factories), so that every runner is
        # forked warm: what the test processes import to report an error, the modules and the
        # prelude every submission with several tests needs, and the fast mode's kernel check,
        # once here instead of once per submission's runner. A pool starts its factories
        # ahead of their first job (BwrapBackend.prewarm), so this is done before one comes.
        warm_server()
    current = _Prepared(libc, in_fd, out_fd, ())
    current.start()
    fast = False  # whether the last submission ran in fast mode: workloads tend to repeat
    while True:
        try:
            upcoming = _Prepared(libc, in_fd, out_fd, current.fds(), fast)
        except OSError:
            upcoming = None  # no process to spare while this submission runs (see below)
        finished = current.wait_finished()
        if not finished:
            code = current.reap()
            if upcoming is not None:
                upcoming.reap()  # its turn never comes: it sees EOF and exits
            if code != EXIT_HOST_GONE:
                # The submission's runner died (or could not be set up); tell the host, whose
                # frames have stopped, and stop: the host discards this sandbox.
                send(out_fd, {"lost": code or EXIT_INTERNAL})
            return
        fast = finished == b"f"
        if upcoming is not None and upcoming.alive():
            try:
                upcoming.start()
            except OSError:
                pass  # it died after all: made again below
            else:
                # The namespace's PID 1 is gone, so every process of that submission is too.
                current.reap()
                current = upcoming
                continue
        # The next submission's sandbox could not be made, or died, while this one ran (a fork
        # bomb held every process the cgroup allows): made again now that this one and
        # everything it started are gone, rather than lost to the next submission.
        current.reap()
        if upcoming is not None:
            upcoming.reap()
        current = _Prepared(libc, in_fd, out_fd, (), fast)
        current.start()
