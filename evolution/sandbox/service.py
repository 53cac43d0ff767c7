"""judge() and run_batch(): the sandbox's service interface for the pipeline and commands.

One sandbox instance (one bwrap process tree or container) serves one submission: the code is
compiled once and every test is a fork of the warm runner. Many tests are split into contiguous
shards that run in parallel sandboxes; the number of sandboxes open at once in this process is
bounded by ``SANDBOX_MAX_PARALLEL``.
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

from . import compare, config
from .backends import get_backend
from .backends.base import Backend

# The runner's exit code for an escaped AssertionError, and the columns of the fast mode's
# outcome rows: defined once, by the protocol the runner inside the sandbox speaks.
from .inside.protocol import EXIT_ASSERT, OUTCOME_FIELDS
from .types import (
    AC,
    CE,
    HARNESSES,
    ISOLATION_MODES,
    MLE,
    OLE,
    RE,
    SE,
    TLE,
    WA,
    JudgeResult,
    Limits,
    RunOutcome,
    SandboxError,
    SandboxUnavailable,
    TestSpec,
    TestVerdict,
)

# Tests per shard below which a second sandbox costs more than it saves.
MIN_SHARD = 24
# Host-side grace on top of a test's own wall limit (fork, cleanup, a loaded machine).
HOST_GRACE_S = 15.0
# Tests in flight at most under a stop condition in fast mode (see _run_session).
LAZY_WINDOW = 32

_slots_lock = threading.Lock()
_slots: threading.BoundedSemaphore | None = None
_slots_size = 0


def max_parallel() -> int:
    return _slots_size or config.settings().SANDBOX_MAX_PARALLEL


def set_max_parallel(n: int) -> None:
    """Resize the bound on concurrently open sandboxes (judge_batch --workers)."""
    global _slots, _slots_size
    with _slots_lock:
        _slots, _slots_size = threading.BoundedSemaphore(max(1, n)), max(1, n)


def _slot() -> threading.BoundedSemaphore:
    global _slots, _slots_size
    with _slots_lock:
        if _slots is None:
            _slots_size = config.settings().SANDBOX_MAX_PARALLEL
            _slots = threading.BoundedSemaphore(_slots_size)
        return _slots


def _check_call(harness: str, entry_point: str) -> None:
    if harness not in HARNESSES:
        raise ValueError(f"harness must be one of {', '.join(HARNESSES)}, got {harness!r}")
    if harness == "function" and not entry_point:
        raise ValueError("the function harness needs entry_point (the function or method name)")


def resolve_isolation(isolation: str | None) -> str:
    """The isolation mode asked for, or the configured one; ValueError names a bad value."""
    mode = isolation or config.settings().SANDBOX_ISOLATION
    if mode not in ISOLATION_MODES:
        raise ValueError(f"isolation must be one of {', '.join(ISOLATION_MODES)}, got {mode!r}")
    return mode


# A JSON integer (RFC 8259: no leading zeros, no plus sign), with the surrounding whitespace
# json.loads accepts.
_JSON_INT = re.compile(r"[ \t\n\r]*-?(?:0|[1-9][0-9]*)[ \t\n\r]*\Z")
# Inputs per frame to the fast path (one frame, one JSON encoding, for many tests).
INPUTS_PER_FRAME = 256


def _outcomes_in(frame: dict) -> list[tuple[int, RunOutcome]]:
    """(index, outcome) for every test a frame reports: one (fork mode, ``"i"`` and the
    fields) or a run of them (fast mode, ``"i"`` of the first and ``"outcomes"`` rows in
    OUTCOME_FIELDS order, made into outcomes without a dict each: the judge's commonest path)."""
    if "outcomes" in frame:
        first = frame["i"]
        found = []
        for k, row in enumerate(frame["outcomes"]):
            if len(row) != len(OUTCOME_FIELDS):
                raise SandboxError(f"runner sent a malformed outcome row: {row!r}"[:2000])
            found.append((first + k, _run_outcome(*row)))
        return found
    return [(frame.get("i"), _outcome(frame))]


# A fork-mode frame's fields that may be missing, and what stands for them (OUTCOME_FIELDS).
_FIELD_DEFAULTS = {"stdout": "", "stderr": "", "time_ms": 0.0, "cpu_ms": 0.0, "signal": 0}


def _outcome(frame: dict) -> RunOutcome:
    return _run_outcome(
        frame["status"],
        *(frame.get(name, _FIELD_DEFAULTS.get(name)) for name in OUTCOME_FIELDS[1:]),
    )


def _run_outcome(
    status, stdout, stderr, time_ms, cpu_ms, memory_kb, exit_code, sig, internal
) -> RunOutcome:
    """One test's outcome from the runner's fields (OUTCOME_FIELDS order)."""
    if internal:
        status, stderr = SE, "the sandbox failed to set up the test process"
    return RunOutcome(status, stdout, stderr, time_ms, exit_code, cpu_ms, memory_kb, sig)


def chunk_of(frame: dict, index: int, wanted: bool) -> bytes:
    """The stdout bytes a ``chunk`` frame carries for test ``index``; SandboxError for a chunk
    not asked for, of another test, or not base64."""
    import binascii  # only a streamed run needs it (the start-up path stays lean)

    if not wanted or frame.get("i") != index:
        raise SandboxError(f"unexpected stdout chunk from the runner (test {frame.get('i')!r})")
    try:
        return binascii.a2b_base64(frame["chunk"])
    except (binascii.Error, TypeError, ValueError) as exc:
        raise SandboxError(f"runner sent a malformed stdout chunk: {exc}") from exc


def _run_session(
    backend: Backend,
    code: str,
    inputs: list[str],
    *,
    harness: str,
    limits: Limits,
    entry_point: str,
    argv: list[str],
    isolation: str = "fast",
    keep_going: Callable[[int, RunOutcome], bool] | None = None,
    group: SandboxGroup | None = None,
    more: bool = False,
    on_chunk: Callable[[bytes], None] | None = None,
) -> tuple[str | None, list[RunOutcome | None]]:
    """Run ``inputs`` in ONE sandbox. Returns (compile error or None, outcomes); outcomes after
    a stop requested by ``keep_going`` are None. With ``group`` the sandbox is the group's
    (kept open after this submission); ``more``: another submission of the group follows.
    With ``on_chunk`` the runner streams each test's stdout: every piece is handed to it as it
    arrives, and outcomes' stdout is empty."""
    outcomes: list[RunOutcome | None] = [None] * len(inputs)
    if not inputs:
        return None, outcomes
    mode = isolation if len(inputs) > 1 and on_chunk is None else "fork"
    lazy = keep_going is not None
    index = sent = 0
    with _slot() if group is None else nullcontext():
        try:
            session = backend.open(limits=limits) if group is None else group.open(limits)
        except SandboxError as exc:
            return None, [RunOutcome(status=SE, stderr=str(exc)) for _ in inputs]

        def finished() -> None:
            """The runner said "done": this submission's job is complete."""
            if group is None:
                session.reusable = True
            else:
                group.finished = True

        if not session.info.get("pid1"):
            mode = "fork"  # the fast path needs the runner to be PID 1 of the sandbox

        def send_more(received: int) -> None:
            """Send the inputs the window allows. Without a stop condition, all of them (the
            runner reads ahead only as far as it wants). With one, a test is sent once the
            outcomes before it allow it: one at a time for a fork per test; in fast mode as many
            in flight as tests already passed plus one, up to LAZY_WINDOW (a stop wastes at most
            that many, and the window doubles per round trip): the fast path runs queued tests
            back to back and itself stops at a status that is not OK."""
            nonlocal sent
            if not lazy:
                allowed = len(inputs)
            elif mode == "fork":
                allowed = received + 1
            else:
                allowed = received + min(received + 1, LAZY_WINDOW)
            upto = min(allowed, len(inputs))
            while sent < upto:
                if mode == "fast":
                    batch = inputs[sent : min(upto, sent + INPUTS_PER_FRAME)]
                    outgoing.append({"inputs": batch})
                else:
                    batch = inputs[sent : sent + 1]
                    outgoing.append({"input": batch[0]})
                sent += len(batch)

        def flush() -> None:
            """Send what is queued, in one write."""
            if outgoing:
                session.send_many(outgoing)
                outgoing.clear()

        ended = stopped = False
        outgoing: list[dict] = []
        try:
            outgoing.append(
                {
                    "code": code,
                    "harness": harness,
                    "entry_point": entry_point,
                    "argv": list(argv),
                    "time_s": limits.time_s,
                    "memory_mb": limits.memory_mb,
                    "max_output_bytes": limits.max_output_bytes,
                    "nproc": getattr(session, "nproc", None),
                    # Warming pays off for several tests, or several submissions of a group
                    # (the first warms the runner the rest fork from; cheap once warm).
                    "warm": len(inputs) > 1 or more,
                    # One test gains nothing from a worker interpreter: a forked test process
                    # is the same fresh state, for less.
                    "isolation": mode,
                    "stop_on_failure": lazy,
                    "more": more,
                    "stream_stdout": on_chunk is not None,
                }
            )
            send_more(0)
            if not lazy:
                outgoing.append({"end": True})
                ended = True
            flush()
            first = session.recv(timeout=60.0 + limits.time_s)
            if "ce" in first:
                if not ended:
                    session.send({"end": True})
                    ended = True
                if session.recv(timeout=HOST_GRACE_S).get("done"):
                    finished()
                return first["ce"], outcomes
            if not first.get("compiled"):
                raise SandboxError(f"unexpected first frame from the runner: {first!r}")
            ooms = session.oom_kills()
            index = 0
            while index < len(inputs) and not stopped:
                frame = session.recv(timeout=limits.time_s + HOST_GRACE_S)
                if "chunk" in frame:
                    on_chunk(chunk_of(frame, index, on_chunk is not None))
                    continue
                for number, outcome in _outcomes_in(frame):
                    if number != index:
                        raise SandboxError(f"runner answered out of order: {frame!r}"[:2000])
                    if outcome.status in (RE, TLE) and outcome.signal == 9:
                        now = session.oom_kills()
                        if now > ooms:
                            outcome.status, ooms = MLE, now
                    outcomes[index] = outcome
                    index += 1
                    if lazy and not keep_going(number, outcome):
                        # The tests still in flight are abandoned, not run to the end.
                        session.send({"end": True, "stop": True})
                        ended = stopped = True
                        break
                if lazy and not ended:
                    send_more(index)
                    flush()
            if not ended:
                session.send({"end": True})
                ended = True
            # Outcomes of abandoned tests may still arrive before the runner's "done".
            while True:
                frame = session.recv(timeout=HOST_GRACE_S)
                if frame.get("done"):
                    finished()
                    break
                if "i" not in frame:
                    break
        except SandboxError as exc:
            for rest in range(index, len(inputs)):
                if outcomes[rest] is None:
                    outcomes[rest] = RunOutcome(status=SE, stderr=str(exc))
        finally:
            if group is None:
                session.close()
            else:
                group.after_job(more)
    return None, outcomes


class SandboxGroup:
    """One sandbox judging consecutive submissions of one batch, one after another in the same
    namespaces (``judge_group``). Between two of them the runner kills every process, empties
    the scratch directories and removes IPC objects (runner.reset_for_next); each submission
    still gets its own compile and its own test processes. A submission that did not end
    cleanly (the sandbox failed, the host stopped waiting) closes the sandbox for good, and the
    next one gets a new sandbox. Holds one of this process's sandbox slots while open."""

    def __init__(self, backend: Backend):
        self.backend = backend
        self.session = None
        self.finished = False
        self._slot: threading.BoundedSemaphore | None = None

    def open(self, limits: Limits):
        if self.session is None:
            if self._slot is None:
                self._slot = _slot()
                self._slot.acquire()
            self.session = self.backend.open(limits=limits)
        else:
            self.backend.set_limits(self.session, limits)
        self.finished = False
        return self.session

    def after_job(self, more: bool) -> None:
        """After a submission: keep the sandbox for the next one, or give it back (to the pool
        when the group ended cleanly, else discarded)."""
        if self.session is not None and not (self.finished and more):
            self.session.reusable = self.finished and not more
            self.session.close()
            self.session = None

    def close(self) -> None:
        """The group is over. A sandbox still open is waiting for a submission that will not
        come: it is discarded, never pooled."""
        if self.session is not None:
            self.session.reusable = False
            self.session.close()
            self.session = None
        if self._slot is not None:
            self._slot.release()
            self._slot = None


def _run_sharded(backend, code, inputs, **kwargs) -> tuple[str | None, list[RunOutcome | None]]:
    shards = min(max_parallel(), max(1, len(inputs) // MIN_SHARD))
    if shards <= 1:
        return _run_session(backend, code, inputs, **kwargs)
    size = math.ceil(len(inputs) / shards)
    chunks = [inputs[i : i + size] for i in range(0, len(inputs), size)]
    with ThreadPoolExecutor(max_workers=len(chunks)) as pool:
        results = list(pool.map(lambda c: _run_session(backend, code, c, **kwargs), chunks))
    for error, _ in results:
        if error is not None:
            return error, [None] * len(inputs)
    return None, [o for _, chunk in results for o in chunk]


def run_batch(
    code: str,
    inputs: list[str],
    *,
    harness: str,
    limits: Limits,
    entry_point: str = "",
    argv: list[str] | None = None,
    backend: Backend | None = None,
    isolation: str | None = None,
) -> list[RunOutcome]:
    """Execute ``code`` on every input and return the raw outcomes, in order.

    For the function harness ``stdout`` is the JSON-encoded return value. A compile error
    gives status CE for every input (the message in ``stderr``); a sandbox failure SE.
    ``isolation`` is "fast" or "fork" (default: SANDBOX_ISOLATION).
    """
    _check_call(harness, entry_point)
    isolation = resolve_isolation(isolation)
    backend = backend or get_backend()
    error, outcomes = _run_sharded(
        backend,
        code,
        list(inputs),
        harness=harness,
        limits=limits,
        entry_point=entry_point,
        argv=list(argv or []),
        isolation=isolation,
    )
    if error is not None:
        return [RunOutcome(status=CE, stderr=error) for _ in inputs]
    return [o if o is not None else RunOutcome(status=SE, stderr="not run") for o in outcomes]


def run_to_file(
    code: str,
    test_input: str,
    path: str | os.PathLike,
    *,
    harness: str,
    limits: Limits,
    argv: list[str] | None = None,
    backend: Backend | None = None,
) -> RunOutcome:
    """Execute ``code`` once on ``test_input`` with its stdout streamed into the file ``path``
    (created or truncated), byte for byte, as the sandbox sends it: at most one piece of it
    (the runner's STREAM_CHUNK, 1 MiB) is in this process's memory at a time, so a run may print
    far more than a string should hold. The outcome's ``stdout`` is empty; its status is
    checked as ``run_batch``'s (OLE above ``limits.max_output_bytes``, of which the file holds
    the first bytes, as it holds whatever a run that failed printed). ``harness``: stdio or
    assert (the function harness returns a value, not a stream). A compile error gives status
    CE, a sandbox failure SE; the file is then empty or partial."""
    if harness not in ("stdio", "assert"):
        raise ValueError(f"run_to_file runs the stdio or assert harness, got {harness!r}")
    backend = backend or get_backend()
    with open(path, "wb") as sink:
        error, outcomes = _run_session(
            backend,
            code,
            [test_input],
            harness=harness,
            limits=limits,
            entry_point="",
            argv=list(argv or []),
            isolation="fork",
            on_chunk=sink.write,
        )
    if error is not None:
        return RunOutcome(status=CE, stderr=error)
    return outcomes[0] or RunOutcome(status=SE, stderr="not run")


_STATUS_VERDICT = {"TLE": TLE, "MLE": MLE, "RE": RE, "OLE": OLE, "CE": CE, "SE": SE}


def _failure_text(verdict: str, outcome: RunOutcome, limits: Limits, detail: str) -> str:
    if verdict == TLE:
        text = f"time limit exceeded: {limits.time_s:g} s wall (ran {outcome.time_ms:.0f} ms)"
    elif verdict == MLE:
        text = f"memory limit exceeded: {limits.memory_mb} MB"
    elif verdict == OLE:
        text = f"output limit exceeded: more than {limits.max_output_bytes} bytes"
    elif verdict == SE:
        text = f"sandbox failure: {outcome.stderr.strip()[-800:]}"
    elif verdict == RE or (verdict == WA and not detail):
        text = f"exit code {outcome.exit_code}\n{outcome.stderr.strip()[-800:]}"
    else:
        text = detail
    return compare.truncate(text)


def _run_checker(checker: str, jobs: list[dict], limits: Limits, backend: Backend) -> list:
    """Run the problem's checker (sandboxed) on each {input, expected, actual} document; each
    result is (AC|WA|SE, message). Contract: the checker reads that JSON document on stdin and
    prints a first line starting with AC or WA (a message may follow); anything else is SE."""
    check_limits = Limits(time_s=max(limits.time_s, 10.0), memory_mb=max(limits.memory_mb, 256))
    outcomes = run_batch(
        checker,
        [json.dumps(job) for job in jobs],
        harness="stdio",
        limits=check_limits,
        backend=backend,
    )
    results = []
    for outcome in outcomes:
        words = outcome.stdout.strip().split(None, 1)
        head = words[0].upper() if words else ""
        message = words[1] if len(words) > 1 else ""
        if outcome.status == "OK" and head in (AC, WA):
            results.append((head, message))
        else:
            results.append((SE, f"checker failed ({outcome.status}): {outcome.stderr[-500:]}"))
    return results


def judge(
    code: str,
    tests: list[TestSpec],
    *,
    harness: str,
    limits: Limits,
    entry_point: str = "",
    comparison: dict | None = None,
    stop_on_first_failure: bool = False,
    backend: Backend | None = None,
    isolation: str | None = None,
    group: SandboxGroup | None = None,
    more: bool = False,
) -> JudgeResult:
    """Judge ``code`` against ``tests``. Raises ValueError for bad arguments (unknown harness,
    missing entry point, expected output that is not JSON for the function harness, a bad
    comparison dict); every failure of the sandbox itself is reported as verdict SE.

    ``isolation``: "fast" (all tests in one sandboxed interpreter) or "fork" (a process per
    test); default the problem's ``comparison["isolation"]``, else SANDBOX_ISOLATION.
    ``group``/``more``: judged in a group's sandbox (see ``judge_group``), never sharded."""
    _check_call(harness, entry_point)
    comparison = dict(comparison or {})
    # The problem's own choice travels with its comparison settings (a per-problem field every
    # caller already passes); an explicit argument wins.
    isolation = resolve_isolation(isolation or comparison.pop("isolation", None))
    options = compare.validate_comparison(comparison)
    tests = list(tests)
    if not tests:
        raise ValueError("judge needs at least one test")
    if harness == "function":
        for number, test in enumerate(tests, 1):
            if _JSON_INT.match(test.output):
                continue  # an integer, the commonest expected answer: JSON as it stands
            try:
                json.loads(test.output)
            except ValueError as exc:
                raise ValueError(f"test {number}: expected output is not JSON ({exc})") from exc
    try:
        backend = backend or get_backend()
    except SandboxUnavailable as exc:
        return JudgeResult(
            verdict=SE,
            passed=0,
            total=len(tests),
            tests=[TestVerdict(verdict=SE, diff=str(exc)) for _ in tests],
        )

    def verdict_of(index: int, outcome: RunOutcome) -> tuple[str, str]:
        if outcome.status != "OK":
            if harness == "assert" and outcome.status == RE and outcome.exit_code == EXIT_ASSERT:
                return WA, ""
            return _STATUS_VERDICT.get(outcome.status, SE), ""
        if harness == "assert":
            return AC, ""
        if options["checker"]:
            return AC, ""  # decided below, in one sandboxed checker batch
        if harness == "function" and outcome.stdout == tests[index].output:
            return AC, ""  # the same JSON text (validated above) is the same value in any mode
        tolerances = {k: options[k] for k in ("mode", "rel_tol", "abs_tol")}
        if harness == "function":
            ok, detail = compare.compare_function(outcome.stdout, tests[index].output, **tolerances)
        else:
            ok, detail = compare.compare_stdio(outcome.stdout, tests[index].output, **tolerances)
        return (AC, "") if ok else (WA, detail)

    def keep_going(index: int, outcome: RunOutcome) -> bool:
        return verdict_of(index, outcome)[0] == AC

    run_kwargs = dict(
        harness=harness, limits=limits, entry_point=entry_point, argv=[], isolation=isolation
    )
    inputs = [t.input for t in tests]
    if group is not None:
        if options["checker"]:
            raise ValueError("a problem with a checker cannot be judged in a group")
        lazy = keep_going if stop_on_first_failure else None
        error, outcomes = _run_session(
            group.backend, code, inputs, keep_going=lazy, group=group, more=more, **run_kwargs
        )
    elif stop_on_first_failure and not options["checker"]:
        error, outcomes = _run_session(backend, code, inputs, keep_going=keep_going, **run_kwargs)
    else:
        error, outcomes = _run_sharded(backend, code, inputs, **run_kwargs)
    if error is not None:
        return JudgeResult(
            verdict=CE,
            passed=0,
            total=len(tests),
            tests=[TestVerdict(verdict=CE, diff=compare.truncate(error)) for _ in tests],
            compile_error=error,
            backend=backend.name,
        )

    verdicts: list[tuple[str, str] | None] = [
        verdict_of(i, o) if o is not None else None for i, o in enumerate(outcomes)
    ]
    if options["checker"]:
        pending = [i for i, o in enumerate(outcomes) if o is not None and o.status == "OK"]
        if pending and harness != "assert":
            documents = [
                {"input": tests[i].input, "expected": tests[i].output, "actual": outcomes[i].stdout}
                for i in pending
            ]
            for i, result in zip(
                pending, _run_checker(options["checker"], documents, limits, backend), strict=True
            ):
                verdicts[i] = result

    result_tests: list[TestVerdict] = []
    first_failure_seen = False
    for outcome, decided in zip(outcomes, verdicts, strict=True):
        if outcome is None or decided is None:
            break
        verdict, detail = decided
        entry = TestVerdict(
            verdict=verdict,
            time_ms=outcome.time_ms,
            cpu_ms=outcome.cpu_ms,
            memory_kb=outcome.memory_kb,
        )
        if verdict == SE or (verdict != AC and not first_failure_seen):
            first_failure_seen = True
            entry.diff = _failure_text(verdict, outcome, limits, detail)
        result_tests.append(entry)
        if stop_on_first_failure and verdict != AC:
            break

    passed = sum(1 for t in result_tests if t.verdict == AC)
    if any(t.verdict == SE for t in result_tests):
        overall = SE
    elif passed == len(tests):
        overall = AC
    else:
        overall = next((t.verdict for t in result_tests if t.verdict != AC), SE)
    return JudgeResult(
        verdict=overall,
        passed=passed,
        total=len(tests),
        tests=result_tests,
        backend=backend.name,
    )
