"""V(s, t) = max(0, sigma (O(s) - O(b)) / max(O(s), O(b))), by hand and through the sandbox."""

from __future__ import annotations

import pytest

from evolution.sandbox import Limits, TestSpec, scoring
from tests.frontiersmith.scripted import BASELINE, STRATEGIES, VERIFIER, WEAK


def test_maximising_scores_the_relative_improvement_over_the_baseline():
    # (12 - 10) / max(12, 10) = 1/6
    assert scoring.relative_score(12.0, 10.0, "max") == pytest.approx(1 / 6)
    # worse than the baseline clips to 0
    assert scoring.relative_score(8.0, 10.0, "max") == 0.0
    assert scoring.relative_score(10.0, 10.0, "max") == 0.0


def test_minimising_scores_the_relative_reduction():
    # -(6 - 10) / max(6, 10) = 0.4
    assert scoring.relative_score(6.0, 10.0, "min") == pytest.approx(0.4)
    assert scoring.relative_score(14.0, 10.0, "min") == 0.0


def test_a_non_positive_denominator_scores_zero():
    assert scoring.relative_score(0.0, 0.0, "max") == 0.0
    assert scoring.relative_score(-3.0, -5.0, "max") == 0.0


def test_it_rejects_an_unknown_direction():
    with pytest.raises(ValueError, match="direction"):
        scoring.relative_score(1.0, 2.0, "up")


def test_it_reads_the_verifier_contract_and_refuses_everything_else():
    assert scoring.parse_verdict('{"feasible": true, "objective": 3}').objective == 3.0
    assert scoring.parse_verdict('{"feasible": false}').feasible is False
    assert scoring.parse_verdict("nope").ok is False
    assert scoring.parse_verdict('{"feasible": true}').ok is False
    assert scoring.parse_verdict('{"feasible": true, "objective": "NaN"}').ok is False


TEST_INPUT = "4 10\n6 6\n5 5\n5 5\n9 1\n"  # baseline (input order) takes item 0 only -> 6


def _tests():
    # The baseline's output is the test's stored output.
    return [TestSpec(input=TEST_INPUT, output="0\n")]


LIMITS = Limits(time_s=3.0, memory_mb=256)


def test_it_scores_a_better_solution_through_the_sandboxed_verifier():
    # lightest-first takes items 1 and 2 -> value 10; (10 - 6) / 10 = 0.4
    result = scoring.score(
        STRATEGIES[2], _tests(), verifier=VERIFIER, direction="max", limits=LIMITS
    )
    [test] = result.scores
    assert (test.status, test.objective, test.baseline) == ("OK", 10.0, 6.0)
    assert test.score == pytest.approx(0.4)
    assert result.mean == pytest.approx(0.4)


def test_the_baseline_itself_and_a_worse_solution_score_zero():
    for code in (BASELINE, WEAK):
        result = scoring.score(code, _tests(), verifier=VERIFIER, direction="max", limits=LIMITS)
        assert result.values == [0.0]


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("raise SystemExit(3)\n", "RE"),
        ("while True:\n    pass\n", "TLE"),
        ("print('seven')\n", "INF"),  # unparsable output: the verifier says infeasible
        ("print(0, 1, 3)\n", "INF"),  # over capacity
        ("def broken(:\n", "CE"),
    ],
)
def test_crashes_timeouts_and_infeasible_outputs_score_zero(code, status):
    result = scoring.score(
        code,
        _tests(),
        verifier=VERIFIER,
        direction="max",
        limits=Limits(time_s=1.0, memory_mb=256),
    )
    [test] = result.scores
    assert (test.status, test.score) == (status, 0.0)


def test_a_crashing_verifier_scores_zero_and_says_so():
    result = scoring.score(
        STRATEGIES[2], _tests(), verifier="raise SystemExit(1)\n", direction="max", limits=LIMITS
    )
    [test] = result.scores
    assert test.score == 0.0
    assert test.status == "NOBASE"  # the baseline cannot be measured either: a problem defect
