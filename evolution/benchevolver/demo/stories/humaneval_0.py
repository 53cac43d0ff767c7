"""HumanEval/0: function-level (HumanEval's assertion harness, kept by the evolved task), the
faithfulness check passes, nobody on the panel solves it: accepted at level 5; stop:
accept_target_level."""

from __future__ import annotations

from ..answers import GENERATOR_HEAD, SOLVER_MODELS, canonical, code, judge, mutation, written

SEED = "HumanEval/0"

# An evolved task keeps its seed's harness (Algorithm 1 keeps E): HumanEval's assertion harness
# calls the seed's entry point, so the evolved solutions still define `has_close_elements` (now
# counting the close pairs) and the tests are assertion programs around the generated calls.

CLOSE_PAIRS = '''
from bisect import bisect_right
from typing import List


def has_close_elements(numbers: List[float], threshold: float) -> int:
    """Number of pairs i < j with |numbers[i] - numbers[j]| < threshold."""
    values = sorted(numbers)
    count = 0
    for j, v in enumerate(values):
        count += j - bisect_right(values, v - threshold, 0, j)
    return count
'''

CLOSE_PAIRS_NAIVE = """
def has_close_elements(numbers, threshold):
    n = len(numbers)
    return sum(1 for i in range(n) for j in range(i + 1, n) if abs(numbers[i] - numbers[j]) < threshold)
"""

CLOSE_PAIRS_LE = """
from bisect import bisect_left


def has_close_elements(numbers, threshold):
    values = sorted(numbers)
    return sum(j - bisect_left(values, v - threshold, 0, j) for j, v in enumerate(values))
"""

CLOSE_PAIRS_GENERATOR = (
    GENERATOR_HEAD
    + """
import json

sizes = {"small": rng.randint(1, 8), "medium": rng.randint(50, 600), "large": 20000}
n = sizes[args.tier]
values = [rng.randint(0, 2000) / 4 for _ in range(n)]
threshold = rng.randint(1, 40) / 4
print(json.dumps(values))
print(json.dumps(threshold))
"""
)

CLOSE_PAIRS_STATEMENT = """
# Close Pairs

Write `has_close_elements(numbers: list[float], threshold: float) -> int` returning the number of
pairs of positions i < j such that |numbers[i] − numbers[j]| < threshold (strictly less).

## Input
`numbers` has 1 ≤ len ≤ 2·10^4 values between 0 and 500; `threshold` is positive. All values are
multiples of 0.25.

## Output
The number of such pairs, as an integer.
"""


def answers(put, panel) -> None:
    """Its answers: the panel's calibration of the seed, then every round's."""
    panel(SEED, 0, {m: [canonical(SEED)] * 4 for m in SOLVER_MODELS})
    # ---- HumanEval/0 R1: function-level, faithful, level 5
    s = "HumanEval/0"
    put(
        s,
        "mutator",
        "round=1",
        mutation(
            "Count all close pairs instead of detecting one: sort and count, for each value, the earlier values within the threshold by binary search.",
            "Detecting a single close pair can stop early; counting them all with a double loop is quadratic.",
            "sorting with binary search counting",
            CLOSE_PAIRS,
        ),
    )
    put(
        s,
        "writer",
        "round=1",
        written(
            "Close Pairs",
            CLOSE_PAIRS_STATEMENT,
            ["[1.0, 2.0, 3.0]\n1.5\n", "[1.0, 2.75, 3.0, 4.0, 5.0, 2.0]\n0.5\n"],
        ),
    )
    put(s, "test_generator", "round=1;try=0", code(CLOSE_PAIRS_GENERATOR))
    for index, program in enumerate([CLOSE_PAIRS, CLOSE_PAIRS_NAIVE, CLOSE_PAIRS_LE]):
        put(s, "faithfulness", f"round=1;repair=0;attempt={index}", code(program))
    panel(
        s,
        1,
        {
            "solver-a": [CLOSE_PAIRS_NAIVE, CLOSE_PAIRS_LE, CLOSE_PAIRS_NAIVE, CLOSE_PAIRS_NAIVE],
            "solver-b": [CLOSE_PAIRS_LE, CLOSE_PAIRS_NAIVE, CLOSE_PAIRS_LE, CLOSE_PAIRS_NAIVE],
        },
    )
    put(
        s,
        "judge",
        "round=1",
        judge(reasons=["strict inequality is stated explicitly; no artificial twist"]),
    )
