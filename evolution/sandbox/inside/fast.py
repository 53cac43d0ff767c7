"""Fast mode: every test of a submission in ONE sandboxed interpreter, the worker, which runs them
back to back and is reset between them; a test that leaves a thread or process behind, crashes,
runs out of memory or time retires the worker and the tests behind it go to a new one
(``FastWorker``). Also one job served (``serve_job``).
"""

# ruff: noqa: SIM105 - contextlib.suppress would cost an import in every sandbox start.

import fcntl
import json
import os
import select
import signal
import sys
import time
from collections import deque

from .child import (
    ReusedStreams,
    classify,
    prefer_as_oom_victim,
    prelude_namespace,
    run_test_child,
    set_limits,
)
from .protocol import (
    EXIT_CHANNEL,
    EXIT_INTERNAL,
    EXIT_MEMORY,
    STATE,
    STDERR_KEEP,
    WARM_MODULES,
    encode_frame,
    exit_if_host_gone,
    ignore,
    name_process,
    recv,
    send,
    write_all,
)
from .run import (
    clean_if_used,
    clean_scratch,
    clip_stderr,
    memfd,
    read_capped,
    reap_everything,
    run_one,
    tmpfs_empty,
)
from .seccomp import prepare_seccomp, seccomp_program
from .snapshot import IN_MEMFD, PIPE_INPUT_BYTES, REPLY, U32, Snapshot


def descriptor_counter():
    """The worker's count of open descriptors in one system call (the size of ``/proc/self/fd``,
    Linux >= 6.2), checked here against a listing with one more descriptor open; where the
    kernel does not report it, the directory is listed."""

    def listed():
        return len(os.listdir("/proc/self/fd")) - 1  # the listing's own descriptor

    def sized():
        return os.stat("/proc/self/fd").st_size

    try:
        extra = os.dup(0)
        try:
            if sized() == listed() > 1:
                return sized
        finally:
            os.close(extra)
    except OSError:
        pass
    return listed


def _fast_worker_main(job, compiled, fds, seccomp, kit):
    """The worker process: set up like a test child, then run the queued tests. ``job`` None:
    forked ahead of its job (FastWorker.prefork), which then comes first on the command pipe."""
    code = EXIT_INTERNAL
    try:
        name_process(b"bf-worker")
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(6, 1 << 16)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if job is not None:
            set_limits(job, cpu=False)
        prefer_as_oom_victim(STATE.get("libc"))
        if seccomp is not None and not seccomp():
            os._exit(EXIT_INTERNAL)
        _fast_worker_loop(job, compiled, kit)
    except BaseException:
        code = EXIT_INTERNAL
    os._exit(code)


def _read_job(fd):
    """A forked-ahead worker's job: ``<u32><job JSON><u32><marshalled code>`` on ``fd``."""
    import marshal

    def exact(n):
        data = b""
        while len(data) < n:
            chunk = os.read(fd, n - len(data))
            if not chunk:
                os._exit(0)  # the runner discarded this worker before giving it a job
            data += chunk
        return data

    job = json.loads(exact(U32.unpack(exact(4))[0]))
    compiled = marshal.loads(exact(U32.unpack(exact(4))[0]))
    return job, compiled


def _cheap_checks(descriptors):
    """The fast worker's leftover checks made cheap with two descriptors of its own: an open
    ``/proc/self/fd`` (its fstat counts the open descriptors, a third of a stat by path) and the
    main thread's ``children`` file (one read tells there is no child, where waitpid raises).
    Returns (descriptor counter, the count it must show after a clean test, the children
    file's descriptor or None). Where either is unavailable, the counter given and a waitpid
    do the work."""
    children = None
    try:
        children = os.open(f"/proc/self/task/{os.getpid()}/children", os.O_RDONLY)
        os.pread(children, 16, 0)
    except OSError:
        if children is not None:
            ignore(os.close, children)
        children = None
    try:
        directory = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return descriptors, descriptors(), children
    fstat = os.fstat
    inode = fstat(directory).st_ino

    def counted():
        try:
            info = fstat(directory)
        except OSError:
            return -1  # the test closed it: the worker is replaced
        return info.st_size if info.st_ino == inode else -1

    expected = len(os.listdir("/proc/self/fd")) - 1  # the listing's own descriptor
    if counted() != expected:  # a kernel that does not count them (Linux < 6.2)
        os.close(directory)
        return descriptors, descriptors(), children
    return counted, expected, children


def _fast_worker_loop(job, compiled, kit):
    """Run the tests queued on the command pipe (fd 4) one after another, without waiting for
    the runner between two of them, and reply (fd 5) after each. Ends when the pipe closes, or
    after a test that leaves something behind (then the runner starts a fresh worker)."""
    import _thread
    import resource

    libc = STATE.get("libc")
    if libc is not None:
        # Orphans of a test are re-parented to the worker, which then sees every process a
        # test left behind with one waitpid().
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    me = os.getpid()
    # Once per worker, not per test: its tests continue one random stream (forked from the
    # same runner, every worker would otherwise start from the same state).
    if "random" in sys.modules:
        sys.modules["random"].seed()
    snapshot, scratch, scratch_empty = kit["snapshot"], kit["scratch"], kit["scratch_empty"]
    descriptors, threads = kit["counters"], _thread._count
    snapshot.watch_signals()
    streams = ReusedStreams()
    if job is None:
        # Everything above was done before the job existed; what depends on it follows.
        job, compiled = _read_job(4)
        set_limits(job, cpu=False)
    stdio = job["harness"] == "stdio"
    per_test_cpu = int(job["time_s"]) + 1
    cap = int(job["max_output_bytes"])
    recursion_limit = sys.getrecursionlimit()
    # Bound here: a test that replaces these names in their modules cannot reach the loop.
    read, write, fstat, pread = os.read, os.write, os.fstat, os.pread
    ftruncate, lseek, pwrite, waitpid = os.ftruncate, os.lseek, os.pwrite, os.waitpid
    pack, unpack_from, clock = REPLY.pack, U32.unpack_from, time.perf_counter
    getrusage, setrlimit = resource.getrusage, resource.setrlimit
    rusage_self, rlimit_cpu, no_limit = (
        resource.RUSAGE_SELF,
        resource.RLIMIT_CPU,
        resource.RLIM_INFINITY,
    )
    run_child, restore, clean = run_test_child, snapshot.restore, clean_if_used
    _, cpu_hard = resource.getrlimit(rlimit_cpu)
    # What descriptors 0-3 are: a test that closes one (``open(0).read()`` closes stdin when
    # its file object is collected) or replaces it must not break the next test. Descriptors 4
    # and 5 are the channel: closing or replacing them ends the worker at its next read or
    # reply (or the runner's clock does).
    identities = [(fstat(fd).st_dev, fstat(fd).st_ino) for fd in range(4)]
    descriptors, expected, children = _cheap_checks(descriptors)

    def children_left():
        if children is not None:
            try:
                if not pread(children, 16, 0):
                    return False  # no child at all, not even a zombie
            except OSError:
                pass
        while True:
            try:
                pid, _ = waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False  # none at all
            except OSError:
                return True
            if pid == 0:
                return True  # one is still running
            # a zombie, reaped; look again

    def output(fd, size, keep):
        if not size:
            return b"", 0
        data = pread(fd, min(size, keep), 0) if keep else b""
        ftruncate(fd, 0)
        lseek(fd, 0, os.SEEK_SET)
        return data, size

    pending, at = bytearray(), 0  # commands read ahead, and where the next one starts
    while True:
        while True:
            if len(pending) >= at + 4:
                (length,) = unpack_from(pending, at)
                if len(pending) >= at + 4 + (0 if length == IN_MEMFD else length):
                    break
            try:
                chunk = read(4, 1 << 20)
            except OSError:
                os._exit(EXIT_CHANNEL)  # a test closed or replaced the command pipe
            if not chunk:
                os._exit(0)  # the runner closed the command pipe: no more tests
            if at:
                del pending[:at]
                at = 0
            pending += chunk
        if length == IN_MEMFD:
            test_input, at = "", at + 4  # already in the stdin memfd, rewound
        else:
            test_input = pending[at + 4 : at + 4 + length].decode()
            at += 4 + length
        started = clock()
        if stdio and length != IN_MEMFD:
            ftruncate(0, 0)
            data, offset = test_input.encode(), 0
            while offset < len(data):
                offset += pwrite(0, data[offset:], offset)
            lseek(0, 0, os.SEEK_SET)
            test_input = ""
        # getrusage, not the process CPU clock: with RLIMIT_CPU set, the kernel serves that
        # clock from its CPU-timer totals, which move only at scheduler ticks.
        before = getrusage(rusage_self)
        used = before.ru_utime + before.ru_stime
        soft = int(used) + 1 + per_test_cpu
        if cpu_hard != no_limit:
            soft = min(soft, cpu_hard)
        setrlimit(rlimit_cpu, (soft, cpu_hard))
        exit_code, result = run_child(job, compiled, test_input, streams)
        if os.getpid() != me:
            os._exit(exit_code)  # a process the test forked finished the test's code
        after = getrusage(rusage_self)
        elapsed = clock() - started
        restore(recursion_limit)
        # A thread, a process, an open file (its directory entry is wiped, the open file is
        # not), exhausted memory or a broken channel would reach the next test: the worker is
        # then replaced, and the runner reads this test's output from the memfds.
        try:
            infos = [fstat(0), fstat(1), fstat(2), fstat(3)]
            intact = [(i.st_dev, i.st_ino) for i in infos] == identities
        except OSError:
            intact = False
        tainted = (
            not intact
            or exit_code == EXIT_MEMORY
            or descriptors() != expected
            or threads()
            or children_left()
        )
        out = err = b""
        out_size = err_size = 0
        if not tainted:
            out, out_size = output(1, infos[1].st_size, cap)
            err, err_size = output(2, infos[2].st_size, STDERR_KEEP * 4)
            output(3, infos[3].st_size, 0)  # a test wrote to the fork mode's result descriptor
            # Standard input's buffers need dropping only if the test read from it.
            streams.rewind = lseek(0, 0, os.SEEK_CUR) != 0
            if not stdio and infos[0].st_size:
                ftruncate(0, 0)
            clean(scratch, scratch_empty)
        result = result[: cap + 1]
        try:
            message = b"".join(
                (
                    pack(
                        len(result),
                        len(out),
                        len(err),
                        out_size,
                        err_size,
                        exit_code,
                        (after.ru_utime + after.ru_stime - used) * 1000,
                        elapsed * 1000,
                        after.ru_maxrss,
                        tainted,
                    ),
                    result,
                    out,
                    err,
                )
            )
            while message:
                message = message[write(5, message) :]
        except OSError:
            os._exit(EXIT_CHANNEL)
        if tainted:
            os._exit(0)


def fast_kit(scratch):
    """What a fast-mode worker starts from: the snapshot its tests are reset to, the
    leftover counters and the scratch directory's empty size. A submission's runner prepares
    it while it waits for its turn (``prepare_fast``); it is made here when that one no longer
    matches (a job that warmed more modules, a scratch directory not yet probed)."""
    if not _fast_kit_matches(scratch):
        return prepare_fast(scratch)
    return STATE["fast_kit"]


def _fast_kit_matches(scratch):
    kit = STATE.get("fast_kit")
    return kit is not None and kit["scratch"] == scratch and kit["modules"] == sys.modules.keys()


def prepare_fast(scratch):
    """Make (and keep) the fast mode's kit for this process and scratch directory: taken in
    the runner, it is the worker's own state right after the fork."""
    clean_scratch(scratch)
    counters = STATE.get("counters")
    if counters is None:
        counters = STATE["counters"] = descriptor_counter()
    kit = {
        "scratch": scratch,
        "scratch_empty": tmpfs_empty(scratch),
        "counters": counters,
        "snapshot": Snapshot(scratch),
        "modules": set(sys.modules),
    }
    STATE["fast_kit"] = kit
    return kit


# Tests queued to one worker at once, and inputs the runner reads ahead from the host.
MAX_INFLIGHT = 64
# With at least this many tests queued and fewer replies than that at hand, the runner naps
# BATCH_WAIT_S before it looks again (the worker has work for longer than that).
BATCH_WAIT_DEPTH = 16
BATCH_WAIT_S = 0.0005
MAX_AHEAD = 256
MAX_AHEAD_BYTES = 8 << 20


class FastWorker:
    """The runner's side of fast mode: queues the tests to a worker, relays its replies to the
    host in order, enforces each test's wall clock, and replaces the worker when a test kills,
    hangs or taints it (the tests queued behind that one go to the new worker)."""

    def __init__(self, job, compiled, seccomp, scratch):
        self.job, self.compiled, self.seccomp, self.scratch = job, compiled, seccomp, scratch
        self.pid = None
        self.function = job["harness"] == "function"
        self.stdio = job["harness"] == "stdio"
        self.cap = int(job["max_output_bytes"])
        self.limit = float(job["time_s"])
        # stdio inputs up to this size travel in the command; larger ones via the stdin memfd.
        self.pipe_input_bytes = min(PIPE_INPUT_BYTES, self.cap)
        # Whether a test left a process the worker cannot see (one that escaped its subreaper):
        # the PID namespace's last allocated PID moves only when something forks (one pread),
        # and only then are PID 1's children listed.
        try:
            self.last_pid_fd = os.open("/proc/sys/kernel/ns_last_pid", os.O_RDONLY)
        except OSError:
            self.last_pid_fd = None
        self.last_pid = None
        self.kit = fast_kit(scratch)
        self.scratch_empty = self.kit["scratch_empty"]

    def _ns_last_pid(self):
        if self.last_pid_fd is None:
            return None
        try:
            return os.pread(self.last_pid_fd, 32, 0)
        except OSError:
            return None

    @staticmethod
    def _spawn(job, compiled, seccomp, kit):
        """Fork a worker: (pid, its memfds, command pipe's write end, reply pipe's read end)."""
        fds = [memfd("stdin"), memfd("stdout"), memfd("stderr"), memfd("result")]
        cmd_r, cmd_w = os.pipe()
        try:
            # A larger command pipe (the most an unprivileged process may ask): more queued
            # tests, and large inputs in fewer round trips. (fcntl is imported with this module:
            # imported here, it would enter sys.modules after the fast-mode kit was taken, and
            # the kit would never match again, see serve_job.)
            fcntl.fcntl(cmd_w, 1031, 1 << 20)  # F_SETPIPE_SZ
        except OSError:
            pass
        reply_r, reply_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(cmd_w)
            os.close(reply_r)
            _fast_worker_main(job, compiled, (*fds, cmd_r, reply_w), seccomp, kit)
        os.close(cmd_r)
        os.close(reply_w)
        return pid, fds, cmd_w, reply_r

    @classmethod
    def prefork(cls, seccomp, kit):
        """Fork the next submission's worker before its job exists (its runner does this while
        it waits for its turn): the fork and the worker's set-up are then off the job's path.
        The first worker of a fast-mode job is this one; any other job discards it."""
        STATE["preforked"] = cls._spawn(None, None, seccomp, kit)

    @staticmethod
    def discard_prefork():
        preforked = STATE.pop("preforked", None)
        if preforked is not None:
            pid, fds, cmd_w, reply_r = preforked
            for fd in (*fds, cmd_w, reply_r):
                ignore(os.close, fd)
            ignore(os.kill, pid, signal.SIGKILL)
            ignore(os.waitpid, pid, 0)

    @staticmethod
    def _take_prefork():
        """The worker forked ahead for this submission, if it is still waiting for its job. It
        waited while the submission before ran in the same cgroups, where the kernel may have
        killed it (it is a preferred OOM victim, as every test process is): handed the job
        anyway, its death would be charged to this submission's first test."""
        preforked = STATE.get("preforked")
        if preforked is None or preforked[0] <= 0:
            STATE.pop("preforked", None)
            return None
        try:
            alive = os.waitpid(preforked[0], os.WNOHANG)[0] == 0
        except ChildProcessError:
            alive = False
        if not alive:
            FastWorker.discard_prefork()
            return None
        return STATE.pop("preforked")

    def _start(self):
        preforked = self._take_prefork()
        if preforked is not None:
            import marshal

            self.pid, self.fds, self.cmd_w, self.reply_r = preforked
            job, code = json.dumps(self.job).encode(), marshal.dumps(self.compiled)
            header = U32.pack(len(job)) + job + U32.pack(len(code)) + code
        else:
            self.pid, self.fds, self.cmd_w, self.reply_r = self._spawn(
                self.job, self.compiled, self.seccomp, self.kit
            )
            header = b""
        os.set_blocking(self.reply_r, False)
        os.set_blocking(self.cmd_w, False)
        self.pidfd = os.pidfd_open(self.pid)
        self.cpu_before = 0.0
        self.replies = bytearray()
        self.commands = bytearray(header)
        self.last_pid = self._ns_last_pid()

    def _retire(self):
        """Stop the worker and everything in the namespace but the runner; reap it all.
        Returns the worker's (wait status, rusage)."""
        if self.pid is None:
            return 0, None
        ignore(os.close, self.cmd_w)
        ignore(os.killpg, self.pid, signal.SIGKILL)
        ignore(os.kill, self.pid, signal.SIGKILL)
        try:
            _, status, usage = os.wait4(self.pid, 0)
        except ChildProcessError:
            status, usage = 0, None
        reap_everything(True, self.pid)
        for fd in (*self.fds, self.reply_r, self.pidfd):
            ignore(os.close, fd)
        self.pid = None
        clean_if_used(self.scratch, self.scratch_empty)
        return status, usage

    def close(self):
        self._retire()
        if self.last_pid_fd is not None:
            ignore(os.close, self.last_pid_fd)
            self.last_pid_fd = None

    def _escaped(self):
        """A process besides the worker that the runner (PID 1) adopted: something a test
        started outside the worker's reach."""
        now = self._ns_last_pid()
        if now is not None and now == self.last_pid:
            return False  # nothing was forked since the last look
        self.last_pid = now
        mine = str(self.pid)
        try:
            with open("/proc/1/task/1/children", "rb") as fh:
                return any(pid != mine.encode() for pid in fh.read().split())
        except OSError:
            return any(n.isdigit() and n != "1" and n != mine for n in os.listdir("/proc"))

    def _fill_stdin(self, data):
        """Put a test's input into the worker's stdin memfd (the worker is idle)."""
        fd = self.fds[0]
        os.ftruncate(fd, 0)
        offset = 0
        while offset < len(data):
            offset += os.pwrite(fd, data[offset:], offset)
        os.lseek(fd, 0, os.SEEK_SET)

    def _flush_commands(self):
        try:
            while self.commands:
                del self.commands[: os.write(self.cmd_w, self.commands)]
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self.commands.clear()  # the worker is gone: its exit is read from the pidfd

    def _read_replies(self):
        """Every complete reply the worker has written: (header fields, payload) each, or
        None in place of one that is not a reply the worker's loop writes."""
        try:
            while True:
                chunk = os.read(self.reply_r, 1 << 20)
                if not chunk:
                    break
                self.replies += chunk
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            pass
        found = []
        while len(self.replies) >= REPLY.size:
            fields = REPLY.unpack_from(self.replies)
            result_len, out_len, err_len = fields[:3]
            if result_len > self.cap + 1 or out_len > self.cap or err_len > STDERR_KEEP * 4:
                found.append(None)
                self.replies.clear()
                break
            end = REPLY.size + result_len + out_len + err_len
            if len(self.replies) < end:
                break
            found.append((fields, bytes(self.replies[REPLY.size : end])))
            del self.replies[:end]
        return found

    def _memfd_output(self, index, keep):
        return read_capped(self.fds[index], keep)

    def _outcome(self, status, stdout, stderr, elapsed_ms, cpu_ms, memory_kb, exit_code, sig):
        """One row of an ``outcomes`` frame (OUTCOME_FIELDS)."""
        return [
            status,
            stdout.decode("utf-8", "replace"),
            clip_stderr(stderr) if stderr else "",
            round(elapsed_ms, 3),
            round(cpu_ms, 3),
            memory_kb,
            exit_code,
            sig,
            exit_code == EXIT_INTERNAL,
        ]

    def _from_reply(self, fields, payload):
        """A finished test's outcome; retires the worker when it asked to be replaced."""
        result_len, out_len, err_len, out_size, err_size, exit_code, cpu_ms = fields[:7]
        elapsed_ms, memory_kb, retire = fields[7:]
        self.cpu_before += cpu_ms
        if retire:
            # The worker left this test's output in the memfds and exits by itself.
            stdout, out_size = self._memfd_output(1, self.cap)
            stderr, err_size = self._memfd_output(2, STDERR_KEEP * 4)
            self._retire()
        else:
            stdout = payload[result_len : result_len + out_len]
            stderr = payload[result_len + out_len :]
        status = classify(False, 0, out_size, err_size, self.cap, exit_code, stderr)
        if self.function:
            stdout = payload[:result_len]
        return self._outcome(status, stdout, stderr, elapsed_ms, cpu_ms, memory_kb, exit_code, 0)

    def _from_death(self, timed_out, elapsed_ms):
        """The outcome of the test the worker was running when it died or was stopped."""
        stdout, out_size = self._memfd_output(1, self.cap)
        stderr, err_size = self._memfd_output(2, STDERR_KEEP * 4)
        status, usage = self._retire()
        exit_code = os.waitstatus_to_exitcode(status)
        term_signal = -exit_code if exit_code < 0 else 0
        # The worker's usage covers every test it ran: this test's share is the rest.
        total = 0.0 if usage is None else (usage.ru_utime + usage.ru_stime) * 1000
        cpu_ms = max(0.0, total - self.cpu_before)
        memory_kb = None if usage is None else usage.ru_maxrss
        state = classify(timed_out, term_signal, out_size, err_size, self.cap, exit_code, stderr)
        if self.function:
            stdout = b""
        return self._outcome(
            state, stdout, stderr, elapsed_ms, cpu_ms, memory_kb, exit_code, term_signal
        )

    def serve(self, in_fd, out_fd):
        """Run the submission's tests as the host streams them in (``{"input": str}`` or
        ``{"inputs": [str, ...]}`` frames); outcomes go back in order, as ``{"i": first index,
        "outcomes": [row, ...]}`` frames (OUTCOME_FIELDS). The host ends with ``{"end": true}``;
        ``"stop": true`` abandons the tests not yet reported. With ``stop_on_failure`` in the
        job, nothing runs after a test whose status is not OK."""
        pending, inflight = deque(), deque()  # inputs: not yet queued / queued to the worker
        ahead_bytes = 0
        ended = stopped = failed = False
        stop_on_failure = bool(self.job.get("stop_on_failure"))
        index = 0
        head_since = 0.0  # when the first queued test started, as far as the runner knows
        watch = STATE.get("host_fd")  # pool mode: the job stream, watched for the host's end
        host = select.poll()
        host.register(in_fd, select.POLLIN)
        while not (ended and not pending and not inflight):
            if pending and not failed:
                if self.pid is None:
                    self._start()
                while pending and len(inflight) < MAX_INFLIGHT and len(self.commands) < 1 << 20:
                    text = pending[0]
                    data = text.encode()
                    if self.stdio and len(data) > self.pipe_input_bytes:
                        # A large input goes into the stdin memfd, written here: the worker
                        # may not write a file that large (RLIMIT_FSIZE is the output cap), and
                        # the pipe would charge its transfer to the test's clock. The memfd is
                        # the worker's only stdin: the tests before it must be done.
                        if inflight:
                            break
                        self._fill_stdin(data)
                        command = U32.pack(IN_MEMFD)
                    else:
                        command = U32.pack(len(data)) + data
                    pending.popleft()
                    if not inflight:
                        head_since = time.monotonic()
                    self.commands += command
                    inflight.append(text)
            if self.pid is not None and self.commands:
                self._flush_commands()  # as much as the pipe takes; the rest when it has room
            poller = select.poll()
            room = len(pending) + len(inflight) < MAX_AHEAD and ahead_bytes < MAX_AHEAD_BYTES
            if not ended and room:
                poller.register(in_fd, select.POLLIN)
            elif watch is not None:
                poller.register(watch, 0)
            if self.pid is not None:
                poller.register(self.reply_r, select.POLLIN)
                poller.register(self.pidfd, select.POLLIN)
                if self.commands:
                    poller.register(self.cmd_w, select.POLLOUT)
            timeout = None
            if inflight and self.pid is not None:
                timeout = max(0, int((head_since + self.limit - time.monotonic()) * 1000) + 1)
            events = poller.poll(timeout)
            if watch is not None:
                exit_if_host_gone(events, watch)
            ready = {fd for fd, _ in events}
            rows = []
            # Every frame the host has already written (one poll each), up to the read-ahead.
            while in_fd in ready and not ended:
                frame = recv(in_fd)
                if frame.get("end"):
                    ended, stopped = True, bool(frame.get("stop"))
                elif not failed:
                    texts = frame["inputs"] if "inputs" in frame else [frame["input"]]
                    pending.extend(texts)
                    ahead_bytes += sum(map(len, texts))
                if len(pending) + len(inflight) >= MAX_AHEAD or ahead_bytes >= MAX_AHEAD_BYTES:
                    break
                ready = ready if host.poll(0) else ready - {in_fd}
            if stopped:
                break
            if self.pid is not None and (self.reply_r in ready or self.pidfd in ready):
                for reply in self._read_replies():
                    if reply is None:
                        rows.append(self._from_death(False, 0.0))
                    else:
                        rows.append(self._from_reply(*reply))
                    ahead_bytes -= len(inflight.popleft())
                    head_since = time.monotonic()
                    if self.pid is None or not inflight:
                        break
                if self.pid is not None and self.pidfd in ready and inflight:
                    # It died inside the first queued test (crash, os._exit, CPU or memory).
                    elapsed = (time.monotonic() - head_since) * 1000
                    rows.append(self._from_death(False, elapsed))
                    ahead_bytes -= len(inflight.popleft())
                if rows and self.pid is not None and self._escaped():
                    self._retire()
            if inflight and self.pid is not None and time.monotonic() >= head_since + self.limit:
                rows.append(self._from_death(True, (time.monotonic() - head_since) * 1000))
                ahead_bytes -= len(inflight.popleft())
            if self.pid is None and inflight:
                # The worker is gone: the tests queued behind go to a fresh one.
                pending.extendleft(reversed(inflight))
                inflight.clear()
            if stop_on_failure:
                for number, row in enumerate(rows):
                    if row[0] != "OK":
                        del rows[number + 1 :]
                        failed = True
                        self._retire()
                        pending.clear()
                        inflight.clear()
                        ahead_bytes = 0
                        break
            if rows:
                send(out_fd, {"i": index, "outcomes": rows})
                index += len(rows)
            if len(inflight) >= BATCH_WAIT_DEPTH and len(rows) < BATCH_WAIT_DEPTH:
                # A deep queue of quick tests: let replies pile up for a moment rather than
                # wake for every few (each wake-up costs the runner more than a reply does).
                time.sleep(BATCH_WAIT_S)


def prepare(libc):
    """Per-process hardening of the runner; returns the prepared seccomp installer or None."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if libc is None:
        return None
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE=0: children may not ptrace or read our memory
    if "seccomp" not in STATE:
        # Built once per factory (see factory()); each submission's runner inherits it.
        program = seccomp_program()
        try:
            STATE["seccomp"] = None if program is None else prepare_seccomp(libc, program)
        except Exception:
            STATE["seccomp"] = None
    return STATE["seccomp"]


def warm():
    """Import the modules tests commonly use and run LiveCodeBench's prelude, once per process
    (and its forks: a runner forked from a warm factory is warm)."""
    if STATE.get("warm"):
        return
    STATE["warm"] = True
    for name in WARM_MODULES:
        try:
            __import__(name)
        except ImportError:
            pass
    limit = sys.getrecursionlimit()
    prelude_namespace("__main__")
    sys.setrecursionlimit(limit)  # the prelude's limit is for the tests that run it


def serve_job(in_fd, out_fd, seccomp, is_pid1):
    """Judge ONE submission: read its job, compile once, run its tests (a fork each, or the
    fast mode's worker), then report done. Returns (the mode its tests ran in, whether the
    host said another submission of the same group follows in this sandbox)."""
    job = recv(in_fd)
    return _serve(job, in_fd, out_fd, seccomp, is_pid1), bool(job.get("more"))


def _serve(job, in_fd, out_fd, seccomp, is_pid1):
    # Warming pays off only when several tests share it; for one test the child imports what
    # it needs itself, and nothing more. (A warm factory's runners are warm already.)
    if job.get("warm"):
        warm()
    if not (job.get("isolation") == "fast" and is_pid1 and _fast_kit_matches(os.getcwd())):
        FastWorker.discard_prefork()
    scratch = os.getcwd()
    try:
        compiled = compile(job["code"], "<solution>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError) as exc:
        import traceback

        message = "".join(traceback.format_exception_only(type(exc), exc))
        FastWorker.discard_prefork()
        send(out_fd, {"ce": message[-4000:]})
        while not recv(in_fd).get("end"):
            pass
        send(out_fd, {"done": True})
        return "none"
    fast = job.get("isolation") == "fast" and is_pid1
    # Without a stop condition the host has sent every input and the end with the job: the
    # "compiled" frame then goes out with the first outcome, and each outcome with "done" when
    # it is the last (one write, and one wake-up of the host, for a one-test submission).
    # With one, or with stdout streamed as the test runs, every frame goes out at once.
    hold = not (fast or job.get("stop_on_failure") or job.get("stream_stdout"))
    held = encode_frame({"compiled": True})
    if not hold:
        write_all(out_fd, held)
        held = b""
    # Fast mode needs to be PID 1 of its namespace: only then can the runner see (and kill)
    # everything a test left running without scanning the host's /proc.
    if fast:
        worker = FastWorker(job, compiled, seccomp, scratch)
        try:
            worker.serve(in_fd, out_fd)
            # The host may go on now: the worker and anything left in this submission's
            # namespaces are gone at the latest when this runner (their PID 1) exits.
            send(out_fd, {"done": True})
        finally:
            worker.close()
        return "fast"
    index = 0
    frame = recv(in_fd)
    while not frame.get("end"):
        outcome = run_one(job, compiled, frame["input"], seccomp, is_pid1, scratch, out_fd, index)
        outcome["i"] = index
        index += 1
        held += encode_frame(outcome)
        if not hold:
            write_all(out_fd, held)  # the host sends the next input once it has read this
            held = b""
        frame = recv(in_fd)  # held: already in the pipe
        if held and not frame.get("end"):
            write_all(out_fd, held)
            held = b""
    write_all(out_fd, held + encode_frame({"done": True}))
    return "fork"
