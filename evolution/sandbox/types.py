"""Plain data shared by the judge, its backends and its callers.

The records below are dataclasses: ``Limits`` and ``TestSpec`` frozen (hashable, immutable),
the others mutable.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError as FrozenInstanceError  # a frozen field assigned
from dataclasses import dataclass, field, fields

# Verdicts of a judged test, in the order a reader meets them in docs/judge.md.
AC, WA, TLE, MLE, RE, OLE, CE, SE = "AC", "WA", "TLE", "MLE", "RE", "OLE", "CE", "SE"
VERDICTS = (AC, WA, TLE, MLE, RE, OLE, CE, SE)
# Statuses of a raw execution (run_batch): no comparison, so no WA.
RUN_STATUSES = ("OK", TLE, MLE, RE, OLE, CE, SE)
HARNESSES = ("stdio", "function", "assert")
# How the tests of one submission share its sandbox (see docs/judge.md, "Security model").
ISOLATION_MODES = ("fast", "fork")


class SandboxError(Exception):
    """The sandbox itself failed (never the solution's fault); surfaces as verdict SE."""


class SandboxUnavailable(SandboxError):
    """The configured backend cannot run here (bwrap missing, unsafe not allowed, ...)."""


class Record:
    """What every record of the judge has besides its dataclass fields: a plain dict."""

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Limits(Record):
    """Per-test limits. ``time_s`` is the wall-clock limit of one test; CPU time is capped at
    ``ceil(time_s) + 1`` s as a backstop. ``memory_mb`` caps the address space of one test
    process (the interpreter's own ~30 MB included, as every rlimit-based judge counts it)."""

    time_s: float = 6.0
    memory_mb: int = 512
    max_output_bytes: int = 1_000_000

    def __post_init__(self):
        if not (0 < self.time_s <= 3600):
            raise ValueError(f"time_s must be in (0, 3600], got {self.time_s}")
        if not (16 <= self.memory_mb <= 65536):
            raise ValueError(f"memory_mb must be in [16, 65536], got {self.memory_mb}")
        if self.max_output_bytes < 1:
            raise ValueError("max_output_bytes must be positive")


@dataclass(frozen=True)
class TestSpec(Record):
    """One test. stdio: stdin and expected stdout. function: JSON arguments one per line and
    the JSON expected return value. assert: the test program in ``input``, ``output`` empty."""

    __test__ = False  # not a pytest test class

    input: str
    output: str = ""


@dataclass
class RunOutcome(Record):
    """A raw execution of one input: what the program printed (function harness: the
    JSON-encoded return value) and how it ended."""

    status: str
    stdout: str = ""
    stderr: str = ""
    time_ms: float = 0.0
    exit_code: int | None = None
    cpu_ms: float = 0.0
    memory_kb: int | None = None
    signal: int = 0


@dataclass
class TestVerdict(Record):
    __test__ = False

    verdict: str
    time_ms: float = 0.0
    cpu_ms: float = 0.0
    memory_kb: int | None = None
    diff: str = ""


@dataclass
class JudgeResult(Record):
    """``verdict`` is AC when every test is AC; otherwise SE if the sandbox failed anywhere,
    CE if the code does not compile, else the verdict of the first failing test. ``tests``
    holds one entry per EXECUTED test (with ``stop_on_first_failure`` the tests after the first
    failure are not run and not listed; ``total`` still counts them)."""

    verdict: str
    passed: int
    total: int
    tests: list[TestVerdict] = field(default_factory=list)
    compile_error: str = ""
    backend: str = ""

    def to_dict(self) -> dict:
        return {
            "verdict": self.verdict,
            "passed": self.passed,
            "total": self.total,
            "tests": [t.to_dict() for t in self.tests],
            "compile_error": self.compile_error,
            "backend": self.backend,
        }
