"""The judge's records (evolution/sandbox/types.py): fields in order with defaults, frozen limits
and tests, a fresh default list per record, validation after the fields are set."""

from __future__ import annotations

import copy
import pickle

import pytest

from evolution.sandbox.batch import JudgeJob
from evolution.sandbox.types import (
    FrozenInstanceError,
    JudgeResult,
    Limits,
    RunOutcome,
    TestSpec,
    TestVerdict,
)


def test_fields_take_positions_keywords_and_defaults():
    outcome = RunOutcome("RE", "out", "err", 1.5, 1, 0.5, 2048, 9)
    assert outcome == RunOutcome(
        status="RE",
        stdout="out",
        stderr="err",
        time_ms=1.5,
        exit_code=1,
        cpu_ms=0.5,
        memory_kb=2048,
        signal=9,
    )
    assert RunOutcome("OK").to_dict() == {
        "status": "OK",
        "stdout": "",
        "stderr": "",
        "time_ms": 0.0,
        "exit_code": None,
        "cpu_ms": 0.0,
        "memory_kb": None,
        "signal": 0,
    }
    assert repr(TestSpec("1", "2")) == "TestSpec(input='1', output='2')"
    with pytest.raises(TypeError, match="status"):
        RunOutcome()
    with pytest.raises(TypeError, match="bogus"):
        RunOutcome("OK", bogus=1)
    with pytest.raises(TypeError):
        TestSpec("1", "2", "3")


def test_a_default_list_is_made_for_every_record():
    first, second = JudgeResult("AC", 1, 1), JudgeResult("AC", 1, 1)
    first.tests.append(TestVerdict("AC"))
    assert second.tests == [] and first != second
    assert JudgeJob("print(1)", [], "stdio").limits == Limits()


def test_limits_and_tests_are_frozen_and_hashable_the_rest_mutable_and_not():
    limits = Limits(time_s=2.0)
    with pytest.raises(FrozenInstanceError):
        limits.time_s = 3.0
    with pytest.raises(AttributeError):
        del TestSpec("1").input
    assert {Limits(time_s=2.0), limits} == {limits}
    assert len({TestSpec("1", "2"), TestSpec("1", "2"), TestSpec("1")}) == 2
    outcome = RunOutcome("RE", signal=9)
    outcome.status = "MLE"
    assert outcome.status == "MLE"
    with pytest.raises(TypeError):
        hash(outcome)


def test_validation_runs_after_the_fields_are_set():
    with pytest.raises(ValueError, match="time_s"):
        Limits(time_s=0)
    with pytest.raises(ValueError, match="memory_mb"):
        Limits(memory_mb=8)


def test_records_of_different_kinds_are_never_equal_and_survive_copies():
    assert TestVerdict("AC") != RunOutcome("AC")
    result = JudgeResult("WA", 0, 1, [TestVerdict("WA", diff="x")], backend="bwrap")
    assert pickle.loads(pickle.dumps(result)) == result
    assert copy.deepcopy(result) == result and copy.deepcopy(result) is not result
    assert pickle.loads(pickle.dumps(Limits(time_s=2.5))) == Limits(time_s=2.5)
    assert result.to_dict()["tests"] == [
        {"verdict": "WA", "time_ms": 0.0, "cpu_ms": 0.0, "memory_kb": None, "diff": "x"}
    ]
