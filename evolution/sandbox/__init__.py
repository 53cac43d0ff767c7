"""The sandboxed judge: run untrusted Python against tests, isolated, fast and exact.

Public interface (see README, "The sandboxed judge")::

    from evolution.sandbox import judge, run_batch, Limits, TestSpec, JudgeResult, RunOutcome
"""

from .service import get_backend, judge, run_batch, set_max_parallel
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
    "set_max_parallel",
]
