"""The child: one test's process, which lowers its limits, installs seccomp and executes the
compiled submission against fresh stdin/stdout/stderr memfds, and how its end is classified.
"""

# ruff: noqa: SIM105 - contextlib.suppress would cost an import in every sandbox start.

import builtins
import io
import json
import os
import signal
import sys

from .protocol import (
    EXIT_ASSERT,
    EXIT_INTERNAL,
    EXIT_MEMORY,
    LCB_PRELUDE,
    STATE,
    name_process,
    print_traceback,
    write_file,
)


def set_limits(job, cpu=True):
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


def make_in_out_streams():
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
    sys.stdin, sys.stdout = STATE.pop("streams", None) or make_in_out_streams()
    sys.stderr = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False), errors="backslashreplace", write_through=True
    )
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr


class ReusedStreams:
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


PRELUDE_CACHE = {}


_STREAM_NAMES = ("stdin", "stdout", "stderr", "__stdin__", "__stdout__", "__stderr__")


def prelude_namespace(name):
    """A fresh module namespace after LiveCodeBench's prelude. The prelude runs once per
    process: its names resolve for every test exactly as LiveCodeBench's module globals do,
    from a builtins module layered under the test's own globals (the builtins with the
    prelude's names over them), so a test's globals start small: its name, that builtins
    module, and the standard streams (``from sys import *``) pointed at this test's streams.
    Copying the prelude's ~600 names into every test's globals would cost a tenth of a
    trivial test; ``globals()`` therefore lists only what the program defines."""
    layer = PRELUDE_CACHE.get("layer")
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
        PRELUDE_CACHE["layer"] = layer
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


def classify(timed_out, term_signal, out_size, err_size, cap, exit_code, stderr) -> str:
    """One test's status from how its process ended (both isolation modes)."""
    if timed_out or term_signal == signal.SIGXCPU:
        return "TLE"
    if out_size > cap or err_size > cap or term_signal == signal.SIGXFSZ:
        return "OLE"
    if exit_code == EXIT_MEMORY or (term_signal == signal.SIGABRT and b"memory" in stderr.lower()):
        return "MLE"
    return "RE" if exit_code != 0 else "OK"


def run_test_child(job, compiled, test_input, fast=None, test_code=None):
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
            namespace = prelude_namespace("__solution__")
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
            namespace = prelude_namespace("__main__")
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
            print_traceback()
            return 1, result
        print_traceback()
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
            print_traceback()
        except MemoryError:
            return EXIT_MEMORY, result
        except Exception:
            pass
        return 1, result
    if final_flush:
        _flush()
    return 0, result


def prefer_as_oom_victim(libc):
    """When the sandbox's cgroup runs out of memory, the kernel must kill a test process, not
    the runner. /proc/self is writable only while dumpable, so that is switched on briefly."""
    if libc is None:
        return
    libc.prctl(4, 1, 0, 0, 0)
    try:
        write_file("/proc/self/oom_score_adj", b"1000")
    except OSError:
        pass
    libc.prctl(4, 0, 0, 0, 0)


# Test programs (assert harness) up to this size are compiled by the runner, larger ones by
# the test process itself.
PRECOMPILE_TEST_BYTES = 64 * 1024


def precompiled_test(job, test_input):
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
            write_file(path, data)
        except OSError:
            pass


def child_main(job, compiled, test_input, fds, seccomp, go=None, test_code=None):
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
            name_process(b"bf-test")
        os.setsid()
        os.dup2(stdin_fd, 0)
        os.dup2(stdout_fd, 1)
        os.dup2(stderr_fd, 2)
        os.dup2(result_fd, 3)
        os.closerange(4, 1 << 16)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        set_limits(job)
        if not dumpable:
            prefer_as_oom_victim(STATE.get("libc"))
        if seccomp is not None and not seccomp():
            os._exit(EXIT_INTERNAL)
        code, result = run_test_child(job, compiled, test_input, test_code=test_code)
        try:
            while result:
                result = result[os.write(3, result) :]
        except OSError:
            code = 1
    except BaseException:
        code = EXIT_INTERNAL
    os._exit(code)
