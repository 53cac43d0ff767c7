"""The engine's only door to the sandbox: one judge, one batch runner, one comparator."""

from __future__ import annotations

from evolution import sandbox
from evolution.sandbox.compare import compare_stdio


def run_batch(code: str, inputs: list[str], **kwargs):
    return sandbox.run_batch(code, inputs, **kwargs)


def judge(code: str, tests: list[tuple[str, str]], **kwargs):
    specs = [sandbox.TestSpec(input=i, output=o) for i, o in tests]
    return sandbox.judge(code, specs, **kwargs)


def judge_many(codes: list[str], tests: list[tuple[str, str]], **kwargs):
    """Judge many programs against the same tests as one workload (a panel's attempts): yields
    one result per program, in order, each as soon as it and those before it are done."""
    from evolution.sandbox.batch import JudgeJob
    from evolution.sandbox.batch import judge_many as judge_jobs

    specs = [sandbox.TestSpec(input=i, output=o) for i, o in tests]
    return judge_jobs(JudgeJob(code=code, tests=specs, **kwargs) for code in codes)


def same_output(expected: str, actual: str, comparison: dict | None = None) -> bool:
    """LiveCodeBench's stdio comparison (or the problem's own mode) between two outputs."""
    c = comparison or {}
    equal, _ = compare_stdio(
        actual,
        expected,
        mode=c.get("mode", "exact")
        if c.get("mode") in ("exact", "float", "unordered")
        else "exact",
        rel_tol=float(c.get("rel_tol", 1e-6)),
        abs_tol=float(c.get("abs_tol", 1e-6)),
    )
    return equal
