"""The engine's only door to the sandbox: limits from the campaign settings, one comparator."""

from __future__ import annotations

from evolution import sandbox
from evolution.pipeline.config import EvolutionSettings


def limits_for(
    settings: EvolutionSettings, *, time_s: float | None = None, memory_mb: int | None = None
):
    return sandbox.Limits(
        time_s=time_s or settings.execution_timeout,
        memory_mb=memory_mb or settings.memory_mb,
        max_output_bytes=settings.max_output_bytes,
    )


def run_batch(code: str, inputs: list[str], **kwargs):
    return sandbox.run_batch(code, inputs, **kwargs)


def judge(code: str, tests: list[tuple[str, str]], **kwargs):
    specs = [sandbox.TestSpec(input=i, output=o) for i, o in tests]
    return sandbox.judge(code, specs, **kwargs)


def same_output(expected: str, actual: str, comparison: dict | None = None) -> bool:
    """LiveCodeBench's comparison (or the problem's own mode) between two outputs."""
    return sandbox.outputs_match(expected, actual, comparison or {})
