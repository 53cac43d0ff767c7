"""Reading judge jobs and test files for the ``judge`` and ``judge_batch`` commands."""

from __future__ import annotations

import json

from .types import HARNESSES, Limits, TestSpec


class JobError(ValueError):
    """A job or tests file is malformed; the message says what and where."""


def tests_from_json(data, *, where: str) -> list[TestSpec]:
    """LiveCodeBench's ``[{"input", "output", "testtype"}]`` (``{"tests": [...]}`` also
    accepted) -> TestSpecs."""
    if isinstance(data, dict) and "tests" in data:
        data = data["tests"]
    if not isinstance(data, list) or not data:
        raise JobError(f"{where}: expected a non-empty list of {{input, output}} objects")
    tests = []
    for number, item in enumerate(data, 1):
        if not isinstance(item, dict) or not isinstance(item.get("input"), str):
            raise JobError(f"{where}: test {number} needs a string 'input'")
        output = item.get("output", "")
        if not isinstance(output, str):
            raise JobError(f"{where}: test {number} has a non-string 'output'")
        tests.append(TestSpec(input=item["input"], output=output))
    return tests


def limits_from(time_limit, memory_mb, *, where: str) -> Limits:
    from .config import settings

    try:
        return Limits(
            time_s=float(time_limit) if time_limit is not None else 6.0,
            memory_mb=int(memory_mb) if memory_mb is not None else 512,
            max_output_bytes=settings().SANDBOX_MAX_OUTPUT_BYTES,
        )
    except (TypeError, ValueError) as exc:
        raise JobError(f"{where}: {exc}") from exc


def parse_job(line: str, *, where: str) -> dict:
    """One JSONL job line -> keyword arguments for ``judge`` plus its ``id``."""
    try:
        job = json.loads(line)
    except ValueError as exc:
        raise JobError(f"{where}: not JSON ({exc})") from exc
    if not isinstance(job, dict):
        raise JobError(f"{where}: a job must be a JSON object")
    harness = job.get("harness", "stdio")
    if harness not in HARNESSES:
        raise JobError(f"{where}: harness must be one of {', '.join(HARNESSES)}")
    if not isinstance(job.get("code"), str):
        raise JobError(f"{where}: 'code' (a string) is required")
    if "test_program" in job:
        if not isinstance(job["test_program"], str):
            raise JobError(f"{where}: 'test_program' must be a string")
        tests = [TestSpec(input=job["test_program"])]
    elif "tests" in job:
        tests = tests_from_json(job["tests"], where=where)
    else:
        raise JobError(f"{where}: one of 'tests' or 'test_program' is required")
    return {
        "id": job.get("id"),
        "code": job["code"],
        "tests": tests,
        "harness": harness,
        "entry_point": job.get("entry_point") or "",
        "limits": limits_from(job.get("time_limit"), job.get("memory_mb"), where=where),
        "comparison": job.get("comparison"),
        "isolation": job.get("isolation"),
    }
