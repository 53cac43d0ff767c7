"""The sandboxed judge: run untrusted Python against tests, isolated, fast and exact.

Public interface (see README, "The sandboxed judge")::

    from evolution.sandbox import judge, run_batch, run_to_file, Limits, TestSpec, JudgeResult
    from evolution.sandbox import RunOutcome
"""

from .service import get_backend, judge, run_batch, run_to_file, set_max_parallel
from .types import (
    VERDICTS,
    JudgeResult,
    Limits,
    RunOutcome,
    SandboxError,
    SandboxUnavailable,
    TestSpec,
    TestVerdict,
)

__all__ = [
    "VERDICTS",
    "JudgeResult",
    "Limits",
    "RunOutcome",
    "SandboxError",
    "SandboxUnavailable",
    "TestSpec",
    "TestVerdict",
    "get_backend",
    "judge",
    "run_batch",
    "run_to_file",
    "set_max_parallel",
]
