"""Plain data shared by the judge, its backends and its callers.

The records below behave as dataclasses do (fields in order with defaults, positional or
keyword construction, ``__post_init__``, ``==`` and ``repr``, frozen ones immutable and
hashable) without importing ``dataclasses``: that import (with ``inspect``, ``ast``, ``dis``,
``tokenize``...) cost the judge's command line ~10 ms before it could start its sandboxes.
"""

from __future__ import annotations

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


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen record (``Limits``, ``TestSpec``)."""


class Default:
    """A field's default made anew for every record (dataclasses' ``default_factory``)."""

    def __init__(self, make):
        self.make = make


def record(frozen: bool = False):
    """Make the annotated class attributes of a ``Record`` subclass its fields, in order; a
    class attribute of the same name is that field's default. Like dataclasses, the class gets
    an ``__init__`` written for its fields (a generic one would cost the judge's host a few
    microseconds per test outcome)."""

    def wrap(cls):
        names = tuple(cls.__dict__.get("__annotations__", {}))
        defaults = {name: cls.__dict__[name] for name in names if name in cls.__dict__}
        params, body = [], []
        for name in names:
            if name not in defaults:
                params.append(name)
            elif isinstance(defaults[name], Default):
                delattr(cls, name)
                params.append(f"{name}=_MISSING")
                body.append(f"    if {name} is _MISSING:\n        {name} = _d_{name}.make()")
            else:
                params.append(f"{name}=_d_{name}")
        if frozen:
            body += [f"    _set(self, {name!r}, {name})" for name in names]
        else:
            body += [f"    self.{name} = {name}" for name in names]
        if "__post_init__" in cls.__dict__:
            body.append("    self.__post_init__()")
        source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body or ["    pass"])
        scope = {"_MISSING": _MISSING, "_set": object.__setattr__}
        scope.update((f"_d_{name}", value) for name, value in defaults.items())
        exec(source, scope)  # noqa: S102 - code written here from the field names
        init = scope["__init__"]
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        cls.__init__ = init
        cls._fields = names
        if frozen:
            cls.__setattr__ = Record._refuse_set
            cls.__delattr__ = Record._refuse_delete
            cls.__hash__ = Record._hash
        else:
            cls.__hash__ = None
        return cls

    return wrap


_MISSING = object()


class Record:
    _fields: tuple[str, ...] = ()

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def _hash(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"

    def _refuse_set(self, name, value):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def _refuse_delete(self, name):
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in self._fields}


@record(frozen=True)
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


@record(frozen=True)
class TestSpec(Record):
    """One test. stdio: stdin and expected stdout. function: JSON arguments one per line and
    the JSON expected return value. assert: the test program in ``input``, ``output`` empty."""

    __test__ = False  # not a pytest test class

    input: str
    output: str = ""


@record()
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


@record()
class TestVerdict(Record):
    __test__ = False

    verdict: str
    time_ms: float = 0.0
    cpu_ms: float = 0.0
    memory_kb: int | None = None
    diff: str = ""


@record()
class JudgeResult(Record):
    """``verdict`` is AC when every test is AC; otherwise SE if the sandbox failed anywhere,
    CE if the code does not compile, else the verdict of the first failing test. ``tests``
    holds one entry per EXECUTED test (with ``stop_on_first_failure`` the tests after the first
    failure are not run and not listed; ``total`` still counts them)."""

    verdict: str
    passed: int
    total: int
    tests: list[TestVerdict] = Default(list)
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
