"""The program that runs INSIDE the sandbox: a warm interpreter that runs a submission's tests.

This file is executed by the sandbox interpreter (as a marshalled code object compiled by that
same interpreter, see backends/base.py, or as ``-c`` source in docker); it must use the standard
library only and must not import anything from the project. Nothing from the host is bound into
the sandbox to run it.

Protocol (all integers big-endian), frames ``<u32 length><json>``:
- runner -> host on fd 1: ``{"ready": ...}`` first (the host may now place the process tree
  into cgroups); then per submission ``{"compiled": true}`` or ``{"ce": message}``, the tests'
  outcomes in order, and ``{"done": true}``. A fork per test sends one ``{"i": index,
  "status": ...}`` frame per test; the fast mode sends ``{"i": first index, "outcomes": [row,
  ...]}`` frames (OUTCOME_FIELDS), as many rows as are ready. With ``"stream_stdout": true`` in
  the job header (fork per test), a test's stdout comes before its outcome frame as ``{"i":
  index, "chunk": base64 text}`` frames of up to STREAM_CHUNK bytes each, in order (at most
  ``max_output_bytes`` in all), and the outcome's ``"stdout"`` is empty. In factory mode a
  ``{"lost": status}`` frame says the submission's runner died (the host discards the sandbox).
- host -> runner on fd 0: per submission the job header (``code``, ``harness``, limits,
  ``isolation``, ``stop_on_failure``, ...), the inputs (``{"input": str}`` frames, or
  ``{"inputs": [str, ...]}`` in fast mode), then ``{"end": true}`` (``"stop": true`` abandons
  what is still running). For a fork per test the runner reads one input at a time, so that a
  forked test never holds later tests' inputs; the fast mode reads ahead (see FastWorker).

Modes:
- single job (docker, unsafe): serve one submission and exit.
- factory (bwrap, ``factory`` argument): serve submissions one after another, each in fresh
  user/PID/mount/IPC/UTS namespaces with fresh /tmp, /dev/shm and /proc (see ``factory``).
- pool (docker, ``pool`` argument, PID 1 of a container only): serve submissions one after
  another in the same warm container, reset between them (see ``pool``); after each reset a
  ``{"ready": true, "oom": count}`` frame says it may take the next job.

Per submission the runner compiles the code once, then either forks a child per test that
lowers its limits, installs a seccomp filter and executes the compiled code against fresh
stdin/stdout/stderr memfds, or (fast mode) hands the tests to one such child, the worker, that
runs them back to back and is reset between them. The runner is PID 1 of its PID namespace
(bwrap, docker), so the kernel drops signals its children send it, and it kills every other
process in the namespace with ``kill(-1, SIGKILL)`` after a forked test or a retired worker:
nothing a test starts (daemons included) survives into the next test.
"""

# ruff: noqa: SIM105 - contextlib.suppress would cost an import in every sandbox start.

import builtins
import fcntl
import io
import json
import os
import select
import signal
import struct
import sys
import time
from collections import deque

# Exit codes the child uses to tell the runner why it stopped (a solution that fakes one of
# them only misreports its own failure).
EXIT_ASSERT = 112
EXIT_MEMORY = 113
EXIT_INTERNAL = 114
EXIT_HOST_GONE = 115
EXIT_CHANNEL = 116  # fast mode: the test closed or replaced the worker's descriptors

# LiveCodeBench runs every stdio and call-based solution after this prelude (testing_util.py
# ``import_string``); solutions written for it rely on these names being present.
LCB_PRELUDE = (
    "from string import *\nfrom re import *\nfrom datetime import *\n"
    "from collections import *\nfrom heapq import *\nfrom bisect import *\n"
    "from copy import *\nfrom math import *\nfrom random import *\n"
    "from statistics import *\nfrom itertools import *\nfrom functools import *\n"
    "from operator import *\nfrom io import *\nfrom sys import *\nfrom json import *\n"
    "from builtins import *\nfrom typing import *\nimport string\nimport re\n"
    "import datetime\nimport collections\nimport heapq\nimport bisect\nimport copy\n"
    "import math\nimport random\nimport statistics\nimport itertools\nimport functools\n"
    "import operator\nimport io\nimport sys\nimport json\nsys.setrecursionlimit(50000)\n"
)
WARM_MODULES = [
    "string",
    "re",
    "datetime",
    "collections",
    "heapq",
    "bisect",
    "copy",
    "math",
    "random",
    "statistics",
    "itertools",
    "functools",
    "operator",
    "typing",
    "decimal",
    "fractions",
    "array",
    "dataclasses",
    "enum",
]

STDERR_KEEP = 8192
# Bytes of a test's stdout per ``chunk`` frame when the host asks for it streamed.
STREAM_CHUNK = 1 << 20
# The columns of an outcome row in a fast-mode ``outcomes`` frame (service.py reads them).
OUTCOME_FIELDS = (
    "status",
    "stdout",
    "stderr",
    "time_ms",
    "cpu_ms",
    "memory_kb",
    "exit_code",
    "signal",
    "internal",
)
_STATE = {}  # process-wide handles set up once by main()


def _ignore(fn, *args):
    """Call fn, swallowing OSError/ValueError (contextlib costs an import we avoid)."""
    try:
        fn(*args)
    except (OSError, ValueError):
        pass


def _name_process(name):
    """The process's name in ps and perf (PR_SET_NAME): bf-factory, bf-middle, bf-runner,
    bf-worker (fast mode) or bf-test (a forked test)."""
    libc = _STATE.get("libc")
    if libc is not None:
        libc.prctl(15, name, 0, 0, 0)


def _print_exc():
    import traceback  # only on the error path: importing it costs ~5 ms per sandbox

    traceback.print_exc()


def _read_exact(fd, n):
    chunks = []
    while n:
        chunk = os.read(fd, n)
        if not chunk:
            raise EOFError("host closed the job stream")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _recv(fd):
    (length,) = struct.unpack(">I", _read_exact(fd, 4))
    return json.loads(_read_exact(fd, length))


def _frame(obj):
    data = json.dumps(obj).encode()
    return struct.pack(">I", len(data)) + data


def _write_all(fd, data):
    while data:
        written = os.write(fd, data)
        data = data[written:]


def _send(fd, obj):
    _write_all(fd, _frame(obj))


def _exit_if_host_gone(events, watch):
    """Pool mode (docker): end this runner, PID 1 of its container, and with it every process
    in it, when the host's end of the job stream is gone (``watch`` hung up in ``events``, a
    poll's answer). The host is gone (killed, or it closed the sandbox): nobody reads what the
    test would report, and the container must not outlive it by the tests still queued."""
    for fd, mask in events:
        if fd == watch and mask & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
            os._exit(EXIT_HOST_GONE)


def _libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


# --- seccomp -------------------------------------------------------------------------------
# Defence in depth behind the namespaces: calls that could reach the kernel's larger attack
# surface, inspect or alter other processes, or open non-local sockets fail with EPERM.
_X86_64_DENY = {
    "ptrace": 101,
    "syslog": 103,
    "personality": 135,
    "vhangup": 153,
    "pivot_root": 155,
    "chroot": 161,
    "acct": 163,
    "settimeofday": 164,
    "mount": 165,
    "umount2": 166,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "sethostname": 170,
    "setdomainname": 171,
    "init_module": 175,
    "delete_module": 176,
    "quotactl": 179,
    "lookup_dcookie": 212,
    "clock_settime": 227,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "unshare": 272,
    "perf_event_open": 298,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "finit_module": 313,
    "kexec_file_load": 320,
    "bpf": 321,
    "userfaultfd": 323,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "pidfd_getfd": 438,
    "mount_setattr": 442,
    # System V and POSIX message queues are not needed by solutions; shared memory (shmget)
    # is left to multiprocessing users, and lives in the per-submission IPC namespace.
    "msgget": 68,
    "msgsnd": 69,
    "msgrcv": 70,
    "msgctl": 71,
    "mq_open": 240,
    "mq_unlink": 241,
}
_SYS_SOCKET = 41
_SYS_CLONE = 56
_SYS_CLONE3 = 435
_AF_UNIX = 1
CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x00020000, 0x02000000, 0x04000000
CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = (
    0x08000000,
    0x10000000,
    0x20000000,
    0x40000000,
)
_CLONE_NEW_ANY = (
    CLONE_NEWNS
    | CLONE_NEWCGROUP
    | CLONE_NEWUTS
    | CLONE_NEWIPC
    | CLONE_NEWUSER
    | CLONE_NEWPID
    | CLONE_NEWNET
)


def seccomp_program():
    """Return the BPF program (list of (code, jt, jf, k)) or None when unsupported here."""
    if os.uname().machine != "x86_64":
        return None
    ld_w_abs, jeq_k, jge_k, jset_k, ret_k = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, errno_eperm, kill_process = 0x7FFF0000, 0x00050000 | 1, 0x80000000
    arch_x86_64 = 0xC000003E
    prog = [
        (ld_w_abs, 0, 0, 4),  # seccomp_data.arch
        (jeq_k, 1, 0, arch_x86_64),
        (ret_k, 0, 0, kill_process),
        (ld_w_abs, 0, 0, 0),  # seccomp_data.nr
        (jge_k, 0, 1, 0x40000000),  # the x32 ABI: refuse wholesale
        (ret_k, 0, 0, errno_eperm),
    ]
    for nr in sorted(_X86_64_DENY.values()):
        prog.append((jeq_k, 0, 1, nr))
        prog.append((ret_k, 0, 0, errno_eperm))
    # clone3 passes its flags in memory, out of a filter's reach: ENOSYS makes libc fall back
    # to clone, whose flags are checked below.
    prog.append((jeq_k, 0, 1, _SYS_CLONE3))
    prog.append((ret_k, 0, 0, 0x00050000 | 38))
    # clone(flags, ...): no new namespaces of any kind.
    prog.append((jeq_k, 0, 3, _SYS_CLONE))
    prog.append((ld_w_abs, 0, 0, 16))  # seccomp_data.args[0], low 32 bits
    prog.append((jset_k, 0, 1, _CLONE_NEW_ANY))
    prog.append((ret_k, 0, 0, errno_eperm))
    prog.append((ld_w_abs, 0, 0, 0))  # reload seccomp_data.nr
    # socket(domain, ...): only AF_UNIX (multiprocessing, asyncio self-pipes) is allowed.
    prog.append((jeq_k, 0, 3, _SYS_SOCKET))
    prog.append((ld_w_abs, 0, 0, 16))  # seccomp_data.args[0], low 32 bits
    prog.append((jeq_k, 1, 0, _AF_UNIX))
    prog.append((ret_k, 0, 0, errno_eperm))
    prog.append((ret_k, 0, 0, allow))
    return prog


def prepare_seccomp(libc, prog):
    """Build the filter in the runner once; the returned callable installs it in a child."""
    import ctypes

    class SockFilter(ctypes.Structure):
        _fields_ = [
            ("code", ctypes.c_ushort),
            ("jt", ctypes.c_ubyte),
            ("jf", ctypes.c_ubyte),
            ("k", ctypes.c_uint),
        ]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

    filters = (SockFilter * len(prog))(*[SockFilter(*ins) for ins in prog])
    fprog = SockFprog(len(prog), filters)
    pointer = ctypes.byref(fprog)
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2

    def install():
        if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0:
            return False
        return libc.prctl(pr_set_seccomp, seccomp_mode_filter, pointer, 0, 0) == 0

    install.keep = (filters, fprog)  # the buffers must outlive the pointer
    return install


# --- the child --------------------------------------------------------------------------------


def _set_limits(job, cpu=True):
    import resource

    mem = int(job["memory_mb"]) * 1024 * 1024
    seconds = int(job["time_s"]) + 1
    caps = [
        (resource.RLIMIT_AS, mem, mem),
        (resource.RLIMIT_FSIZE, job["max_output_bytes"] + 1, job["max_output_bytes"] + 1),
        (resource.RLIMIT_NOFILE, 64, 64),
        (resource.RLIMIT_CORE, 0, 0),
        (resource.RLIMIT_STACK, min(mem, 256 * 1024 * 1024), min(mem, 256 * 1024 * 1024)),
    ]
    if cpu:
        # Fast mode sets the soft CPU limit per test instead (see _fast_worker_main).
        caps.append((resource.RLIMIT_CPU, seconds, seconds + 1))
    if job.get("nproc"):
        caps.append((resource.RLIMIT_NPROC, job["nproc"], job["nproc"]))
    for which, soft, hard in caps:
        try:
            _, old_hard = resource.getrlimit(which)
            if old_hard != resource.RLIM_INFINITY:
                soft, hard = min(soft, old_hard), min(hard, old_hard)
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            pass


def _make_in_out_streams():
    """Text streams on descriptors 0 and 1 (whatever those are when they are used)."""
    return (
        io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False))),
        io.TextIOWrapper(
            io.BufferedWriter(io.FileIO(1, "w", closefd=False), 1 << 16), write_through=False
        ),
    )


def _fresh_std_streams():
    """A forked test's standard streams, on its memfds (already at 0, 1 and 2). The factory
    makes standard input and output once, unused, for every test process forked under it to
    inherit as they were made (making text streams in a freshly forked interpreter costs a
    sixth of a trivial test: see factory); elsewhere, and when a process asks again (the fast
    worker, after a test that replaced or closed its streams), they are made here."""
    sys.stdin, sys.stdout = _STATE.pop("streams", None) or _make_in_out_streams()
    sys.stderr = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False), errors="backslashreplace", write_through=True
    )
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr


class _ReusedStreams:
    """The fast worker's standard streams. Making three text streams and finalizing the last
    test's three costs a fifth of a trivial test, so a test gets the previous test's objects
    when it left them exactly as made: still ``sys.stdin``/``stdout``/``stderr`` and their
    ``__std*__`` twins, open, attached, with the same encoding, errors, buffering and chunk
    size and no attribute set on them or their buffers; standard input is rewound (its buffers
    dropped) when the last test read from it. Anything else gets new streams."""

    def __init__(self):
        self.rewind = False  # whether the last test read standard input (the worker says)
        self.make()

    def make(self):
        _fresh_std_streams()
        self.streams = (sys.stdin, sys.stdout, sys.stderr)
        self.parts = []
        for stream in self.streams:
            self.parts.append(stream)
            self.parts.append(stream.buffer)
            if hasattr(stream.buffer, "raw"):
                self.parts.append(stream.buffer.raw)
        self.dicts = [part.__dict__ for part in self.parts]
        self.saved = [dict(namespace) for namespace in self.dicts]
        self.settings = self._settings()

    def _settings(self):
        return [
            (s.encoding, s.errors, s.line_buffering, s.write_through, s._CHUNK_SIZE)
            for s in self.streams
        ]

    def intact(self):
        stdin, stdout, stderr = self.streams
        if not (
            sys.stdin is stdin
            and sys.stdout is stdout
            and sys.stderr is stderr
            and sys.__stdin__ is stdin
            and sys.__stdout__ is stdout
            and sys.__stderr__ is stderr
        ):
            return False
        try:
            if stdin.closed or stdout.closed or stderr.closed:
                return False
            if self._settings() != self.settings:
                return False
        except (ValueError, AttributeError):  # detached
            return False
        for part, namespace in zip(self.parts, self.dicts, strict=True):
            if part.__dict__ is not namespace:
                return False
        return self.dicts == self.saved

    def next_test(self, rewind=True):
        if self.intact():
            if not rewind:
                return
            try:
                self.streams[0].seek(0)
                return
            except (OSError, ValueError):
                pass
        self.make()


def _flush():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


def _to_jsonable(value):
    if isinstance(value, tuple):
        return [_to_jsonable(v) for v in value]
    if isinstance(value, list):
        return [_to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_jsonable(v) for k, v in value.items()}
    return value


_PRELUDE_CACHE = {}


_STREAM_NAMES = ("stdin", "stdout", "stderr", "__stdin__", "__stdout__", "__stderr__")


def _prelude_namespace(name):
    """A fresh module namespace after LiveCodeBench's prelude. The prelude runs once per
    process: its names resolve for every test exactly as LiveCodeBench's module globals do,
    from a builtins module layered under the test's own globals (the builtins with the
    prelude's names over them), so a test's globals start small: its name, that builtins
    module, and the standard streams (``from sys import *``) pointed at this test's streams.
    Copying the prelude's ~600 names into every test's globals would cost a tenth of a
    trivial test; ``globals()`` therefore lists only what the program defines."""
    layer = _PRELUDE_CACHE.get("layer")
    if layer is None:
        template = {"__builtins__": builtins}
        exec(LCB_PRELUDE, template)
        layer = type(sys)("builtins")
        layer.__dict__.update(builtins.__dict__)
        layer.__dict__.update(
            (key, value)
            for key, value in template.items()
            if key != "__builtins__" and key not in _STREAM_NAMES
        )
        _PRELUDE_CACHE["layer"] = layer
    namespace = {"__name__": name, "__builtins__": layer}
    for stream in _STREAM_NAMES:
        namespace[stream] = getattr(sys, stream)
    sys.setrecursionlimit(50000)
    return namespace


def _join_threads():
    """Wait for the program's non-daemon threads, as the interpreter does before it exits: the
    idiom ``threading.Thread(target=main).start()`` (for a bigger stack) prints from a thread."""
    threading = sys.modules.get("threading")
    if threading is None:
        return
    current = threading.current_thread()
    for thread in threading.enumerate():
        if thread is not current and not thread.daemon and thread.is_alive():
            thread.join()


def _classify(timed_out, term_signal, out_size, err_size, cap, exit_code, stderr) -> str:
    """One test's status from how its process ended (both isolation modes)."""
    if timed_out or term_signal == signal.SIGXCPU:
        return "TLE"
    if out_size > cap or err_size > cap or term_signal == signal.SIGXFSZ:
        return "OLE"
    if exit_code == EXIT_MEMORY or (term_signal == signal.SIGABRT and b"memory" in stderr.lower()):
        return "MLE"
    return "RE" if exit_code != 0 else "OK"


def _run_child(job, compiled, test_input, fast=None, test_code=None):
    """Run one test in this process: returns (exit code, the function harness's JSON-encoded
    return value or b""). ``fast``: in the fast mode's worker, where the next test follows in
    the same process, its _ReusedStreams."""
    if fast is None:
        _fresh_std_streams()
    else:
        fast.next_test(fast.rewind)
    sys.argv = ["solution.py", *job.get("argv", [])]
    # A forked test does not replay the runner's random stream: the random module reseeds
    # itself in every child of os.fork (its register_at_fork hook).
    namespaces = []
    try:
        return _execute(job, compiled, test_input, namespaces, test_code, fast is None)
    finally:
        if fast:
            # The test's globals and the functions in them form reference cycles: emptied here
            # they are freed at once, instead of by the cyclic collector traversing every
            # test's ~600 prelude names (a sixth of the per-test cost).
            for namespace in namespaces:
                namespace.clear()
            _flush()


def _execute(job, compiled, test_input, namespaces, test_code=None, final_flush=True):
    """``final_flush``: flush the standard streams after a program that ended normally (the fast
    worker's _run_child flushes them itself, after emptying the test's globals)."""
    harness = job["harness"]
    result = b""
    try:
        if harness == "assert":
            namespace = {"__name__": "__candidate__", "__builtins__": builtins}
            namespaces.append(namespace)
            exec(compiled, namespace)
            exec(test_code or compile(test_input, "<test>", "exec"), namespace)
            entry = job.get("entry_point") or ""
            if entry:
                if "check" not in namespace:
                    raise NameError("the test program does not define check(candidate)")
                namespace["check"](namespace[entry])
        elif harness == "function":
            namespace = _prelude_namespace("__solution__")
            namespaces.append(namespace)
            exec(compiled, namespace)
            entry = job["entry_point"]
            if "class Solution" in job["code"]:
                target = namespace["Solution"]()
                method = getattr(target, entry)
            else:
                method = namespace[entry]
            args = [json.loads(line) for line in test_input.split("\n") if line.strip()]
            value = method(*args)
            try:
                # An int (the commonest answer) is its own JSON text: json.dumps costs more.
                encoded = str(value) if type(value) is int else json.dumps(_to_jsonable(value))
            except (TypeError, ValueError):
                encoded = json.dumps({"__unserializable__": repr(value)[:1000]})
            result = encoded.encode()
        else:
            namespace = _prelude_namespace("__main__")
            namespaces.append(namespace)
            exec(compiled, namespace)
            _join_threads()
    except SystemExit as exc:
        _flush()
        code = exc.code
        if code is None:
            return 0, result
        if isinstance(code, int):
            return code & 0xFF, result
        print(code, file=sys.stderr)
        return 1, result
    except AssertionError:
        _flush()
        if harness != "assert":
            _print_exc()
            return 1, result
        _print_exc()
        return EXIT_ASSERT, result
    except MemoryError:
        _flush()
        try:
            sys.stderr.write("MemoryError\n")
        except Exception:
            pass
        return EXIT_MEMORY, result
    except BaseException:
        _flush()
        try:
            _print_exc()
        except MemoryError:
            return EXIT_MEMORY, result
        except Exception:
            pass
        return 1, result
    if final_flush:
        _flush()
    return 0, result


def _prefer_as_oom_victim(libc):
    """When the sandbox's cgroup runs out of memory, the kernel must kill a test process, not
    the runner. /proc/self is writable only while dumpable, so that is switched on briefly."""
    if libc is None:
        return
    libc.prctl(4, 1, 0, 0, 0)
    try:
        _write_file("/proc/self/oom_score_adj", b"1000")
    except OSError:
        pass
    libc.prctl(4, 0, 0, 0, 0)


# Test programs (assert harness) up to this size are compiled by the runner, larger ones by
# the test process itself.
PRECOMPILE_TEST_BYTES = 64 * 1024


def _precompiled_test(job, test_input):
    """The assert harness's test program compiled here, before the fork: compiling it in the
    freshly forked test process costs that process a third of a HumanEval test's CPU (its
    first allocations touch new pages). A program that does not compile is left to the test
    process, which reports the error as before."""
    if job["harness"] != "assert" or len(test_input) > PRECOMPILE_TEST_BYTES:
        return None
    try:
        return compile(test_input, "<test>", "exec")
    except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError):
        return None


def _mark_test_process():
    """In a test process forked dumpable (run_one): its name, and first in line for the OOM
    killer, written to its own /proc files."""
    for path, data in (("/proc/self/comm", b"bf-test"), ("/proc/self/oom_score_adj", b"1000")):
        try:
            _write_file(path, data)
        except OSError:
            pass


def _child_main(job, compiled, test_input, fds, seccomp, go=None, test_code=None):
    """A forked test process. ``go`` (forked dumpable, see run_one): the pipe on which the
    runner says it is non-dumpable again; nothing of the submission runs before that byte."""
    stdin_fd, stdout_fd, stderr_fd, result_fd = fds
    dumpable = go is not None
    try:
        if dumpable:
            _mark_test_process()
            os.close(go[1])
            if os.read(go[0], 1) != b"\0":
                os._exit(EXIT_INTERNAL)
        else:
            _name_process(b"bf-test")
        os.setsid()
        os.dup2(stdin_fd, 0)
        os.dup2(stdout_fd, 1)
        os.dup2(stderr_fd, 2)
        os.dup2(result_fd, 3)
        os.closerange(4, 1 << 16)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _set_limits(job)
        if not dumpable:
            _prefer_as_oom_victim(_STATE.get("libc"))
        if seccomp is not None and not seccomp():
            os._exit(EXIT_INTERNAL)
        code, result = _run_child(job, compiled, test_input, test_code=test_code)
        try:
            while result:
                result = result[os.write(3, result) :]
        except OSError:
            code = 1
    except BaseException:
        code = EXIT_INTERNAL
    os._exit(code)


# --- the runner -------------------------------------------------------------------------------


def _memfd(name, data=b""):
    fd = os.memfd_create(name, 0)
    if data:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _read_capped(fd, cap):
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
        _send(out_fd, {"i": index, "chunk": text})
        offset += len(data)
    return size


def _clip_stderr(data):
    text = data.decode("utf-8", "replace")
    if len(text) > STDERR_KEEP:
        text = text[:2048] + "\n...[truncated]...\n" + text[-(STDERR_KEEP - 2048) :]
    return text


def _reap_everything(is_pid1, pgid):
    """Kill what the test left behind (daemons included) and wait until it is all gone.
    ``pgid`` None: no test's process group to start with (everything is killed anyway)."""
    if pgid is not None:
        _ignore(os.killpg, pgid, signal.SIGKILL)
    while True:
        if is_pid1:
            # PID 1 of a namespace: -1 reaches every other process in it, never us.
            _ignore(os.kill, -1, signal.SIGKILL)
        else:
            for pid in _children_of(os.getpid()):
                _ignore(os.kill, pid, signal.SIGKILL)
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


def _tmpfs_empty(path):
    """The size ``path`` (this sandbox's /tmp or /dev/shm) shows when empty, probed once per
    process on the emptied directory (see _tmpfs_empty_size); None where a directory's size
    does not count its entries."""
    sizes = _STATE.setdefault("tmpfs_empty", {})
    if path not in sizes:
        _clean_scratch(path)
        sizes[path] = _tmpfs_empty_size(path)
    return sizes[path]


def _clean_if_used(path, empty, stat=os.stat):
    """Empty ``path`` unless its size is ``empty`` (the size it shows when empty, or None when
    its size says nothing): one stat instead of a listing, after most tests. ``stat`` is bound
    here: a fast-mode test that replaces ``os.stat`` cannot make its leftovers look gone."""
    try:
        used = empty is None or stat(path).st_size != empty
    except OSError:
        used = True
    if used:
        _clean_scratch(path)


def _clean_tmpfs(path):
    """Empty ``path``, a tmpfs of this sandbox, with one stat when it is empty already."""
    _clean_if_used(path, _tmpfs_empty(path))


def _clean_scratch(scratch):
    """Empty ``scratch`` (symbolic links are removed, never followed). A directory a test made
    read-only is made writable first. No shutil: it would import bz2 and lzma in the sandbox."""
    try:
        entries = list(os.scandir(scratch))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                _ignore(os.chmod, entry.path, 0o700)
                _clean_scratch(entry.path)
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
        _memfd("stdin", test_input.encode() if job["harness"] == "stdio" else b""),
        _memfd("stdout"),
        _memfd("stderr"),
        _memfd("result"),
    )
    started = time.monotonic()
    # Forked dumpable, the test process can name itself and ask to be the OOM victim through
    # its own /proc files, without ctypes calls (their first use in a fresh child costs a
    # quarter of a trivial test). Safe: nothing of the submission runs now (the last test's
    # processes are all reaped), and the runner is non-dumpable again right after the fork,
    # before the test process may go on: it waits on ``go`` for the runner's word, so that not
    # one instruction of the submission runs while the runner's /proc files are open to it.
    libc = _STATE.get("libc") if is_pid1 else None
    test_code = _precompiled_test(job, test_input)
    go = None
    if libc is not None:
        go = os.pipe()
        libc.prctl(4, 1, 0, 0, 0)
    pid = os.fork()
    if pid == 0:
        _child_main(job, compiled, test_input, fds, seccomp, go, test_code)
    if go is not None:
        libc.prctl(4, 0, 0, 0, 0)
        os.close(go[0])
        _ignore(os.write, go[1], b"\0")
        os.close(go[1])
    status = None
    timed_out = False
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        pidfd = None
    deadline = started + float(job["time_s"])
    watch = _STATE.get("host_fd")
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
                _exit_if_host_gone(poller.poll(max(1, int(remaining * 1000) + 1)), watch)
            done_pid, raw, usage = os.wait4(pid, os.WNOHANG)
        else:
            done_pid, raw, usage = os.wait4(pid, os.WNOHANG)
            if done_pid == 0:
                time.sleep(min(0.002, remaining))
        if done_pid == pid:
            status = raw
    elapsed = time.monotonic() - started
    if timed_out:
        _ignore(os.killpg, pid, signal.SIGKILL)
        _, status, usage = os.wait4(pid, 0)
    if pidfd is not None:
        os.close(pidfd)
    _reap_everything(is_pid1, pid)
    if is_pid1:
        _clean_tmpfs(scratch)
    else:
        _clean_scratch(scratch)

    if job.get("stream_stdout") and out_fd is not None:
        stdout, out_size = b"", _stream_capped(fds[1], cap, out_fd, index)
    else:
        stdout, out_size = _read_capped(fds[1], cap)
    stderr, err_size = _read_capped(fds[2], STDERR_KEEP * 4)
    result, _ = _read_capped(fds[3], cap)
    for fd in fds:
        os.close(fd)

    exit_code = os.waitstatus_to_exitcode(status)
    term_signal = -exit_code if exit_code < 0 else 0
    cpu_s = usage.ru_utime + usage.ru_stime
    state = _classify(timed_out, term_signal, out_size, err_size, cap, exit_code, stderr)
    return {
        "status": state,
        "stdout": (result if job["harness"] == "function" else stdout).decode("utf-8", "replace"),
        "stderr": _clip_stderr(stderr),
        "time_ms": round(elapsed * 1000, 3),
        "cpu_ms": round(cpu_s * 1000, 3),
        "memory_kb": usage.ru_maxrss,
        "exit_code": exit_code,
        "signal": term_signal,
        "internal": exit_code == EXIT_INTERNAL,
    }


# --- fast mode: every test of a submission in ONE sandboxed interpreter --------------------------
# The runner forks one "worker" per submission that lowers its limits and installs seccomp like
# a test child, then executes test after test as the runner queues them (it never waits for
# the runner between two): fresh module globals per test, standard streams that are new or
# exactly as made, a per-test CPU limit, and the process state a test can change through
# ordinary means (builtins, sys settings, signal handlers, cwd, environment, imported modules,
# the attributes of pre-imported standard modules) put back after it, cheaply when nothing
# changed. A test that leaves a thread or process behind, crashes, runs out of memory or out of
# time retires the worker; the tests queued behind it go to a new one, forked from the runner.
# What the worker does NOT reset is listed in docs/judge.md.

FAST_RESET_MODULES = (
    "string",
    "re",
    "datetime",
    "collections",
    "heapq",
    "bisect",
    "copy",
    "math",
    "random",
    "statistics",
    "itertools",
    "functools",
    "operator",
    "io",
    "json",
    "typing",
    "os",
    "time",
)

# Runner <-> worker messages are raw bytes, not JSON (they cost a few microseconds per test).
# Command: <u32 length><the test's input, UTF-8>. Reply: REPLY (lengths of the result, stdout
# and stderr that follow, stdout and stderr sizes, exit code, CPU ms, wall ms, peak RSS kB,
# retire flag), then the function harness's JSON-encoded return value, stdout, stderr.
_U32 = struct.Struct(">I")
REPLY = struct.Struct(">IIIQQiddqb")
# A command of this length alone: the test's input is already in the stdin memfd (stdio inputs
# larger than PIPE_INPUT_BYTES, or than the output cap, are written there by the runner).
IN_MEMFD = 0xFFFFFFFF
PIPE_INPUT_BYTES = 256 * 1024


class _DictWatch:
    """Tells cheaply whether any of some dicts changed since ``mark()``: CPython (3.11-3.13)
    gives every dict a version tag that changes on each of its mutations; reading those tags
    costs ~0.1 us per dict where comparing two module dicts costs ~1-2 us. Used only when a
    self-check at start-up shows the tag behaving so on this interpreter (layout, and a change
    on mutation); otherwise every check says "maybe changed" and the caller compares."""

    def __init__(self, dicts):
        self.tags = None
        try:
            import ctypes

            def tag(d):
                return ctypes.c_uint64.from_address(id(d) + 24)

            def used(d):
                return ctypes.c_ssize_t.from_address(id(d) + 16).value

            probe = {"a": 1}
            before = tag(probe).value
            probe["a"] = 2
            after_set = tag(probe).value
            del probe["a"]
            if (
                sys.implementation.name == "cpython"
                and sys.version_info[:2] in ((3, 11), (3, 12), (3, 13))
                and used({"x": 1, "y": 2}) == 2
                and before != after_set != tag(probe).value
                and all(used(d) == len(d) for d in dicts)
            ):
                self.tags = [tag(d) for d in dicts]
        except Exception:
            self.tags = None
        self.marks = None
        self.mark()

    def mark(self):
        if self.tags is not None:
            self.marks = [t.value for t in self.tags]

    def changed(self):
        if self.tags is None:
            return True
        return [t.value for t in self.tags] != self.marks


# What a fast-mode test changed through Python that restore() must put back: set by the
# wrappers of _track (cwd: os.chdir and os.fchdir; timers: signal.setitimer and signal.alarm),
# cleared by restore(). True at first: a worker's first reset does everything.
_TOUCHED = {"cwd": True, "timers": True}
_UNWRAPPED = {}  # (module name, function name): the function _track wrapped


def _track(module, name, what):
    """Replace ``module.name`` with a wrapper that notes ``what`` in _TOUCHED before calling
    through (once per process)."""
    original = getattr(module, name, None)
    if original is None or getattr(original, "_bf_tracks", None):
        return
    _UNWRAPPED.setdefault((module.__name__, name), original)

    def wrapper(*args, **kwargs):
        _TOUCHED[what] = True
        return original(*args, **kwargs)

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = original.__doc__
    wrapper._bf_tracks = what
    setattr(module, name, wrapper)


class _Snapshot:
    """What the worker puts back after every test (taken once, after warming)."""

    def __init__(self, scratch):
        import _signal
        import posix

        # Before the module dicts are copied: os is one of the modules reset after a test, and
        # its saved dict must hold the wrappers.
        for module in (os, posix):
            _track(module, "chdir", "cwd")
            _track(module, "fchdir", "cwd")
        self.scratch = scratch
        self.builtins = dict(builtins.__dict__)
        self.modules = dict(sys.modules)
        self.module_dicts = [
            (sys.modules[name].__dict__, dict(sys.modules[name].__dict__))
            for name in FAST_RESET_MODULES
            if name in sys.modules
        ]
        if "layer" in _PRELUDE_CACHE:
            # The prelude's builtins module, shared by the tests (``__builtins__.x = ...``).
            layer = _PRELUDE_CACHE["layer"].__dict__
            self.module_dicts.append((layer, dict(layer)))
        self.sys_attrs = {
            name: getattr(sys, name)
            for name in ("displayhook", "excepthook", "breakpointhook", "unraisablehook")
            if hasattr(sys, name)
        }
        self.sys_path = list(sys.path)
        self.sys_meta_path = list(sys.meta_path)
        self.sys_path_hooks = list(sys.path_hooks)
        self.switch_interval = sys.getswitchinterval()
        self.int_digits = getattr(sys, "get_int_max_str_digits", lambda: None)()
        # os.environ's own bytes mapping: comparing it costs a dict comparison, comparing the
        # os.environ mapping decodes every variable (~80 us per test on a loaded host).
        self.environ_data = dict(getattr(os.environ, "_data", {}))
        self.environ = dict(os.environ)
        self.umask = os.umask(0o022)
        os.umask(self.umask)
        # The C module's getsignal: the signal module's wrapper converts every answer to an
        # enum (~1 us per signal).
        self.getsignal, self.setsignal = _signal.getsignal, _signal.signal
        signals, handlers = [], []
        for sig in _signal.valid_signals():
            try:
                handler = _signal.getsignal(sig)
            except (OSError, ValueError):
                continue
            if handler is not None:
                signals.append(sig)
                handlers.append(handler)
        self.signals, self.handlers = signals, handlers
        self.default_handlers = dict(zip(signals, handlers, strict=True))
        self.touched = None  # signals given a handler since the last restore (watch_signals)
        self.setitimer = _signal.setitimer
        self.chdir = _UNWRAPPED[("posix", "chdir")]
        self.timers = (_signal.ITIMER_REAL, _signal.ITIMER_VIRTUAL, _signal.ITIMER_PROF)
        self.live_dicts = [live for live, _ in self.module_dicts]
        self.saved_dicts = [saved for _, saved in self.module_dicts]
        self.watch = _DictWatch([builtins.__dict__, sys.modules, *self.live_dicts])

    def watch_signals(self):
        """From now on (in the worker) note every signal given a handler through the signal
        module (``signal.signal`` calls ``_signal.signal``), so that restore() checks those
        instead of every signal (~60 look-ups, a fifth of a trivial test's reset)."""
        import _signal

        touched, setsignal = set(), self.setsignal

        def signal(signalnum, handler):
            touched.add(int(signalnum))
            return setsignal(signalnum, handler)

        signal.__doc__ = setsignal.__doc__
        _signal.signal = signal
        self.touched = touched
        # Timers: _signal's functions and the signal module's copies of them (``from _signal
        # import *``).
        for module in (_signal, sys.modules.get("signal")):
            if module is not None:
                _track(module, "setitimer", "timers")
                _track(module, "alarm", "timers")

    def restore(self, recursion_limit):
        """Put the process back as it was before the test. Cheap when nothing changed: the
        timers and the working directory are put back after a test that set them through
        Python (the wrappers of _track), or that changed an imported module or builtins (it
        may have reached the unwrapped functions: everything is put back then)."""
        changed = self.watch.changed()
        touched = _TOUCHED
        if changed or touched["timers"]:
            for timer in self.timers:
                self.setitimer(timer, 0)
            touched["timers"] = False
        if self.touched is None:
            # map() keeps the per-signal loop in C: ~60 signals checked in a few microseconds.
            if list(map(self.getsignal, self.signals)) != self.handlers:
                for sig, handler in zip(self.signals, self.handlers, strict=True):
                    if self.getsignal(sig) is not handler:
                        _ignore(self.setsignal, sig, handler)
        elif self.touched:
            for sig in self.touched:
                handler = self.default_handlers.get(sig)
                if handler is not None and self.getsignal(sig) is not handler:
                    _ignore(self.setsignal, sig, handler)
            self.touched.clear()
        sys.settrace(None)
        sys.setprofile(None)
        if changed:
            if builtins.__dict__ != self.builtins:
                builtins.__dict__.clear()
                builtins.__dict__.update(self.builtins)
            modules = sys.modules
            if len(modules) != len(self.modules) or modules != self.modules:
                # Modules a test imported are dropped (the next test imports them afresh, as a
                # forked test would); modules it replaced or removed are put back.
                modules.clear()
                modules.update(self.modules)
            if any(map(dict.__ne__, self.live_dicts, self.saved_dicts)):
                for live, saved in self.module_dicts:
                    if live != saved:
                        live.clear()
                        live.update(saved)
            self.watch.mark()
        if getattr(os.environ, "_data", None) != self.environ_data:
            os.environ.clear()
            os.environ.update(self.environ)
        for name, value in self.sys_attrs.items():
            setattr(sys, name, value)
        sys.path[:] = self.sys_path
        sys.meta_path[:] = self.sys_meta_path
        sys.path_hooks[:] = self.sys_path_hooks
        sys.path_importer_cache.clear()
        sys.setrecursionlimit(recursion_limit)
        sys.setswitchinterval(self.switch_interval)
        if self.int_digits is not None:
            sys.set_int_max_str_digits(self.int_digits)
        os.umask(self.umask)
        if changed or touched["cwd"]:
            self.chdir(self.scratch)
            touched["cwd"] = False


def _descriptor_counter():
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
        _name_process(b"bf-worker")
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(6, 1 << 16)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if job is not None:
            _set_limits(job, cpu=False)
        _prefer_as_oom_victim(_STATE.get("libc"))
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

    job = json.loads(exact(_U32.unpack(exact(4))[0]))
    compiled = marshal.loads(exact(_U32.unpack(exact(4))[0]))
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
            _ignore(os.close, children)
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

    libc = _STATE.get("libc")
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
    streams = _ReusedStreams()
    if job is None:
        # Everything above was done before the job existed; what depends on it follows.
        job, compiled = _read_job(4)
        _set_limits(job, cpu=False)
    stdio = job["harness"] == "stdio"
    per_test_cpu = int(job["time_s"]) + 1
    cap = int(job["max_output_bytes"])
    recursion_limit = sys.getrecursionlimit()
    # Bound here: a test that replaces these names in their modules cannot reach the loop.
    read, write, fstat, pread = os.read, os.write, os.fstat, os.pread
    ftruncate, lseek, pwrite, waitpid = os.ftruncate, os.lseek, os.pwrite, os.waitpid
    pack, unpack_from, clock = REPLY.pack, _U32.unpack_from, time.perf_counter
    getrusage, setrlimit = resource.getrusage, resource.setrlimit
    rusage_self, rlimit_cpu, no_limit = (
        resource.RUSAGE_SELF,
        resource.RLIMIT_CPU,
        resource.RLIM_INFINITY,
    )
    run_child, restore, clean = _run_child, snapshot.restore, _clean_if_used
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


def _fast_kit(scratch):
    """What a fast-mode worker starts from: the snapshot its tests are reset to, the
    leftover counters and the scratch directory's empty size. A submission's runner prepares
    it while it waits for its turn (``prepare_fast``); it is made here when that one no longer
    matches (a job that warmed more modules, a scratch directory not yet probed)."""
    if not _fast_kit_matches(scratch):
        return prepare_fast(scratch)
    return _STATE["fast_kit"]


def _fast_kit_matches(scratch):
    kit = _STATE.get("fast_kit")
    return kit is not None and kit["scratch"] == scratch and kit["modules"] == sys.modules.keys()


def prepare_fast(scratch):
    """Make (and keep) the fast mode's kit for this process and scratch directory: taken in
    the runner, it is the worker's own state right after the fork."""
    _clean_scratch(scratch)
    counters = _STATE.get("counters")
    if counters is None:
        counters = _STATE["counters"] = _descriptor_counter()
    kit = {
        "scratch": scratch,
        "scratch_empty": _tmpfs_empty(scratch),
        "counters": counters,
        "snapshot": _Snapshot(scratch),
        "modules": set(sys.modules),
    }
    _STATE["fast_kit"] = kit
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
        self.kit = _fast_kit(scratch)
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
        fds = [_memfd("stdin"), _memfd("stdout"), _memfd("stderr"), _memfd("result")]
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
        _STATE["preforked"] = cls._spawn(None, None, seccomp, kit)

    @staticmethod
    def discard_prefork():
        preforked = _STATE.pop("preforked", None)
        if preforked is not None:
            pid, fds, cmd_w, reply_r = preforked
            for fd in (*fds, cmd_w, reply_r):
                _ignore(os.close, fd)
            _ignore(os.kill, pid, signal.SIGKILL)
            _ignore(os.waitpid, pid, 0)

    @staticmethod
    def _take_prefork():
        """The worker forked ahead for this submission, if it is still waiting for its job. It
        waited while the submission before ran in the same cgroups, where the kernel may have
        killed it (it is a preferred OOM victim, as every test process is): handed the job
        anyway, its death would be charged to this submission's first test."""
        preforked = _STATE.get("preforked")
        if preforked is None or preforked[0] <= 0:
            _STATE.pop("preforked", None)
            return None
        try:
            alive = os.waitpid(preforked[0], os.WNOHANG)[0] == 0
        except ChildProcessError:
            alive = False
        if not alive:
            FastWorker.discard_prefork()
            return None
        return _STATE.pop("preforked")

    def _start(self):
        preforked = self._take_prefork()
        if preforked is not None:
            import marshal

            self.pid, self.fds, self.cmd_w, self.reply_r = preforked
            job, code = json.dumps(self.job).encode(), marshal.dumps(self.compiled)
            header = _U32.pack(len(job)) + job + _U32.pack(len(code)) + code
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
        _ignore(os.close, self.cmd_w)
        _ignore(os.killpg, self.pid, signal.SIGKILL)
        _ignore(os.kill, self.pid, signal.SIGKILL)
        try:
            _, status, usage = os.wait4(self.pid, 0)
        except ChildProcessError:
            status, usage = 0, None
        _reap_everything(True, self.pid)
        for fd in (*self.fds, self.reply_r, self.pidfd):
            _ignore(os.close, fd)
        self.pid = None
        _clean_if_used(self.scratch, self.scratch_empty)
        return status, usage

    def close(self):
        self._retire()
        if self.last_pid_fd is not None:
            _ignore(os.close, self.last_pid_fd)
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
        return _read_capped(self.fds[index], keep)

    def _outcome(self, status, stdout, stderr, elapsed_ms, cpu_ms, memory_kb, exit_code, sig):
        """One row of an ``outcomes`` frame (OUTCOME_FIELDS)."""
        return [
            status,
            stdout.decode("utf-8", "replace"),
            _clip_stderr(stderr) if stderr else "",
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
        status = _classify(False, 0, out_size, err_size, self.cap, exit_code, stderr)
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
        state = _classify(timed_out, term_signal, out_size, err_size, self.cap, exit_code, stderr)
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
        watch = _STATE.get("host_fd")  # pool mode: the job stream, watched for the host's end
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
                        command = _U32.pack(IN_MEMFD)
                    else:
                        command = _U32.pack(len(data)) + data
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
                _exit_if_host_gone(events, watch)
            ready = {fd for fd, _ in events}
            rows = []
            # Every frame the host has already written (one poll each), up to the read-ahead.
            while in_fd in ready and not ended:
                frame = _recv(in_fd)
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
                _send(out_fd, {"i": index, "outcomes": rows})
                index += len(rows)
            if len(inflight) >= BATCH_WAIT_DEPTH and len(rows) < BATCH_WAIT_DEPTH:
                # A deep queue of quick tests: let replies pile up for a moment rather than
                # wake for every few (each wake-up costs the runner more than a reply does).
                time.sleep(BATCH_WAIT_S)


def _prepare(libc):
    """Per-process hardening of the runner; returns the prepared seccomp installer or None."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if libc is None:
        return None
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE=0: children may not ptrace or read our memory
    if "seccomp" not in _STATE:
        # Built once per factory (see factory()); each submission's runner inherits it.
        program = seccomp_program()
        try:
            _STATE["seccomp"] = None if program is None else prepare_seccomp(libc, program)
        except Exception:
            _STATE["seccomp"] = None
    return _STATE["seccomp"]


def warm():
    """Import the modules tests commonly use and run LiveCodeBench's prelude, once per process
    (and its forks: a runner forked from a warm factory is warm)."""
    if _STATE.get("warm"):
        return
    _STATE["warm"] = True
    for name in WARM_MODULES:
        try:
            __import__(name)
        except ImportError:
            pass
    limit = sys.getrecursionlimit()
    _prelude_namespace("__main__")
    sys.setrecursionlimit(limit)  # the prelude's limit is for the tests that run it


def serve_job(in_fd, out_fd, seccomp, is_pid1):
    """Judge ONE submission: read its job, compile once, run its tests (a fork each, or the
    fast mode's worker), then report done. Returns (the mode its tests ran in, whether the
    host said another submission of the same group follows in this sandbox)."""
    job = _recv(in_fd)
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
        _send(out_fd, {"ce": message[-4000:]})
        while not _recv(in_fd).get("end"):
            pass
        _send(out_fd, {"done": True})
        return "none"
    fast = job.get("isolation") == "fast" and is_pid1
    # Without a stop condition the host has sent every input and the end with the job: the
    # "compiled" frame then goes out with the first outcome, and each outcome with "done" when
    # it is the last (one write, and one wake-up of the host, for a one-test submission).
    # With one, or with stdout streamed as the test runs, every frame goes out at once.
    hold = not (fast or job.get("stop_on_failure") or job.get("stream_stdout"))
    held = _frame({"compiled": True})
    if not hold:
        _write_all(out_fd, held)
        held = b""
    # Fast mode needs to be PID 1 of its namespace: only then can the runner see (and kill)
    # everything a test left running without scanning the host's /proc.
    if fast:
        worker = FastWorker(job, compiled, seccomp, scratch)
        try:
            worker.serve(in_fd, out_fd)
            # The host may go on now: the worker and anything left in this submission's
            # namespaces are gone at the latest when this runner (their PID 1) exits.
            _send(out_fd, {"done": True})
        finally:
            worker.close()
        return "fast"
    index = 0
    frame = _recv(in_fd)
    while not frame.get("end"):
        outcome = run_one(job, compiled, frame["input"], seccomp, is_pid1, scratch, out_fd, index)
        outcome["i"] = index
        index += 1
        held += _frame(outcome)
        if not hold:
            _write_all(out_fd, held)  # the host sends the next input once it has read this
            held = b""
        frame = _recv(in_fd)  # held: already in the pipe
        if held and not frame.get("end"):
            _write_all(out_fd, held)
            held = b""
    _write_all(out_fd, held + _frame({"done": True}))
    return "fork"


# --- factory mode (bwrap): a fresh set of namespaces per submission ---------------------------

MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000


def _write_file(path, data):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


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
    _write_file("/proc/self/setgroups", b"deny")
    _write_file("/proc/self/uid_map", f"{uid} {uid} 1".encode())
    _write_file("/proc/self/gid_map", f"{gid} {gid} 1".encode())


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
    if "capset" not in _STATE:
        import ctypes

        class Header(ctypes.Structure):
            _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

        class Data(ctypes.Structure):
            _fields_ = [(n, ctypes.c_uint32) for n in ("effective", "permitted", "inheritable")]

        _STATE["capset"] = (Header(0x20080522, 0), (Data * 2)())
    return _STATE["capset"]


IPC_RMID = 0


def _remove_ipc_objects(libc):
    """Remove every System V shared memory segment and semaphore set of this IPC namespace
    (message queues are refused by seccomp). Test processes run as the runner's uid, so it
    owns what they made."""
    tables = _STATE.setdefault("ipc_tables", {})
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
    _reap_everything(True, None)
    for path in ("/tmp", "/dev/shm"):
        _clean_tmpfs(path)
    if libc is not None:
        _remove_ipc_objects(libc)
    os.chdir("/tmp")


def _filtered():
    """What a child calls to install seccomp when it inherited the filter already."""
    return True


def _installed_here(seccomp):
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
                _ignore(os.close, fd)
            try:
                _name_process(b"bf-middle")
                _enter_fresh_namespaces(libc)
                submission = os.fork()
                if submission == 0:
                    try:
                        _name_process(b"bf-runner")
                        _fresh_mounts_and_drop_privileges(libc)
                        seccomp = _installed_here(_prepare(libc))
                        fast = fast and "layer" in _PRELUDE_CACHE
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
                        _ignore(os.write, 2, f"submission runner failed: {exc!r}\n".encode())
                        os._exit(EXIT_INTERNAL)
                os.close(turn_r)
                os.close(finished_w)
                _, status = os.waitpid(submission, 0)
                os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
            except BaseException as exc:
                _ignore(os.write, 2, f"namespace setup failed: {exc!r}\n".encode())
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
            _ignore(os.close, fd)
        self.turn_w = self.finished_r = None
        try:
            _, status = os.waitpid(self.middle, 0)
        except ChildProcessError:
            return EXIT_INTERNAL
        return os.waitstatus_to_exitcode(status)


def _warm_server():
    """Warm a process that serves many submissions (a factory, a pool container's runner):
    what test processes import to report an error, the modules and prelude of multi-test
    submissions, the fast mode's kernel check; then keep what exists out of the collector's
    reach in everything forked from here."""
    try:
        __import__("traceback")
        warm()
        _STATE["counters"] = _descriptor_counter()
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
    _name_process(b"bf-factory")
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
    _STATE["streams"] = _make_in_out_streams()
    _send(out_fd, {"ready": True, "pid1": True, "seccomp": seccomp_program() is not None})
    # Fork nothing before the host has moved us into the sandbox's cgroups: a process forked
    # earlier would stay outside them (its limits and accounting).
    go = _recv(in_fd)
    if not go.get("go"):
        return
    # Every test process sets its limits with resource: imported once here, as are the
    # seccomp filter and capset's arguments every submission's runner uses.
    import resource  # noqa: F401

    _prepare(libc)
    _capset_empty()
    signal.signal(signal.SIGINT, signal.SIG_DFL)

    if go.get("warm", True):
        # Before the first submission's sandbox is made (and only for a factory that will
        # serve more than one, see BwrapBackend.warm_factories), so that every runner is
        # forked warm: what the test processes import to report an error, the modules and the
        # prelude every submission with several tests needs, and the fast mode's kernel check,
        # once here instead of once per submission's runner. A pool starts its factories
        # ahead of their first job (BwrapBackend.prewarm), so this is done before one comes.
        _warm_server()
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
                _send(out_fd, {"lost": code or EXIT_INTERNAL})
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


# --- pool mode (docker): one warm container serves submissions one after another ------------

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
    fds = _STATE.setdefault("oom_fds", {})
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
    _name_process(b"bf-runner")
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
    _STATE["streams"] = _make_in_out_streams()
    _STATE["host_fd"] = in_fd
    # The runner installs seccomp in itself (bwrap's submission runners do too): every test
    # process and worker inherits it, and the reset needs none of the refused calls.
    seccomp = _installed_here(_prepare(libc))
    ready = {"ready": True, "pid1": True, "pool": True, "seccomp": seccomp is not None}
    _send(out_fd, {**ready, "oom": _oom_count()})
    try:
        go = _recv(in_fd)
        if go.get("warm", True):
            # What factory() warms, once per container: every job is then served warm.
            _warm_server()
        while True:
            mode, _ = serve_job(in_fd, out_fd, seccomp, True)
            reset_for_next(libc)
            for path in POOL_SCRATCH:
                _clean_scratch(path)
            if mode == "fast":
                # Workloads repeat: the next job's worker, forked ahead from the clean runner.
                FastWorker.prefork(seccomp, _fast_kit(os.getcwd()))
            _send(out_fd, {"ready": True, "oom": _oom_count()})
    except EOFError:
        pass  # the host closed the stream: the container ends with this process
    os._exit(EXIT_HOST_GONE)


def main():
    in_fd, out_fd = 0, 1
    libc = None
    try:
        libc = _libc()
    except Exception:
        libc = None
    _STATE["libc"] = libc
    if len(sys.argv) > 1 and sys.argv[1] == "factory" and libc is not None:
        factory(in_fd, out_fd, libc)
        return
    is_pid1 = os.getpid() == 1
    if len(sys.argv) > 1 and sys.argv[1] == "pool" and libc is not None and is_pid1:
        # Only as PID 1: the reset kills every other process the runner can reach. Elsewhere
        # it serves one job below, and its "ready" frame does not say "pool".
        pool(in_fd, out_fd, libc)
        return
    seccomp = _prepare(libc)
    if not is_pid1 and libc is not None:
        # Outside a PID namespace (unsafe backend) orphans of a test are re-parented to us,
        # so that they can still be found and killed after the test.
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    _send(out_fd, {"ready": True, "pid1": is_pid1, "seccomp": seccomp is not None})
    serve_job(in_fd, out_fd, seccomp, is_pid1)  # one submission: a group is bwrap's only


if __name__ == "__main__":
    main()
