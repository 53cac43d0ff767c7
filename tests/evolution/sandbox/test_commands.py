"""The judge and judge_batch management commands (real default backend)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command


def _write(path, text):
    path.write_text(text)
    return str(path)


def test_judge_prints_the_json_contract(tmp_path):
    code = _write(tmp_path / "sol.py", "print(int(input()) + 1)")
    tests = _write(
        tmp_path / "tests.json",
        json.dumps(
            [
                {"input": "1\n", "output": "2\n", "testtype": "stdin"},
                {"input": "5\n", "output": "7\n", "testtype": "stdin"},
            ]
        ),
    )
    out = io.StringIO()
    call_command(
        "judge", "--harness", "stdio", "--code", code, "--tests", tests, "--json", stdout=out
    )
    result = json.loads(out.getvalue())
    assert (result["verdict"], result["passed"], result["total"]) == ("WA", 1, 2)
    assert [t["verdict"] for t in result["tests"]] == ["AC", "WA"]
    assert all(isinstance(t["time_ms"], float) for t in result["tests"])


def test_judge_runs_a_test_program_with_an_entry_point(tmp_path):
    code = _write(tmp_path / "sol.py", "def inc(x):\n    return x + 1\n")
    program = _write(tmp_path / "check.py", "def check(candidate):\n    assert candidate(1) == 2\n")
    out = io.StringIO()
    call_command(
        "judge",
        "--harness",
        "assert",
        "--code",
        code,
        "--test-program",
        program,
        "--entry-point",
        "inc",
        "--time-limit",
        "2",
        "--memory-mb",
        "256",
        "--json",
        stdout=out,
    )
    assert json.loads(out.getvalue())["verdict"] == "AC"


def test_judge_rejects_bad_inputs_with_clear_errors(tmp_path):
    code = _write(tmp_path / "sol.py", "print(1)")
    with pytest.raises(CommandError, match="missing.json"):
        call_command(
            "judge", "--harness", "stdio", "--code", code, "--tests", str(tmp_path / "missing.json")
        )
    bad = _write(tmp_path / "bad.json", "{not json")
    with pytest.raises(CommandError, match="not JSON"):
        call_command("judge", "--harness", "stdio", "--code", code, "--tests", bad)
    empty = _write(tmp_path / "empty.json", "[]")
    with pytest.raises(CommandError, match="non-empty"):
        call_command("judge", "--harness", "stdio", "--code", code, "--tests", empty)


def test_judge_batch_writes_one_result_per_job_with_its_id(tmp_path):
    jobs = [
        {
            "id": "a",
            "harness": "stdio",
            "code": "print(input())",
            "tests": [{"input": "x", "output": "x"}],
        },
        {
            "id": "b",
            "harness": "function",
            "code": "def f(n):\n    return n * 3",
            "entry_point": "f",
            "tests": [{"input": "2", "output": "6"}],
            "time_limit": 2,
            "memory_mb": 256,
        },
        {
            "id": "c",
            "harness": "assert",
            "code": "def g():\n    return 1",
            "test_program": "def check(c):\n    assert c() == 2\n",
            "entry_point": "g",
        },
        {"id": "d", "harness": "stdio", "code": "print(1)"},
    ]
    source = _write(
        tmp_path / "jobs.jsonl", "\n".join(json.dumps(j) for j in jobs) + "\nnot json\n"
    )
    target = tmp_path / "results.jsonl"
    err = io.StringIO()
    call_command("judge_batch", "--in", source, "--out", str(target), "--workers", "2", stderr=err)
    results = [json.loads(line) for line in target.read_text().splitlines()]
    by_id = {r["id"]: r for r in results if r["id"] is not None}
    assert by_id["a"]["verdict"] == "AC"
    assert by_id["b"]["verdict"] == "AC"
    assert by_id["c"]["verdict"] == "WA"
    assert "tests" in by_id["d"]["error"] and "jobs.jsonl:4" in by_id["d"]["error"]
    assert len(results) == 5  # the malformed line is reported, not dropped
    assert "5/5" in err.getvalue()  # the progress bar reached the end
