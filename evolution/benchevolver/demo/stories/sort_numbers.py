"""demo/sort-numbers: the reference disagrees with brute force and oracle, three repairs fail ->
invalid (R1); not harder (R2); stop: no_improve_patience."""

from __future__ import annotations

from ..answers import (
    ARRAY_VALIDATOR,
    SOLVER_MODELS,
    code,
    mutation,
    oracle,
    repair,
    written,
)
from .array_sum import ARRAY_GENERATOR

SEED = "demo/sort-numbers"


SORT_REF = """
n = int(input())
a = sorted(map(int, input().split()))
print(" ".join(map(str, a)))
"""

PAIRWISE_DIFF_DOUBLE = """
import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    a = sorted(map(int, data[1 : 1 + n]))
    total = prefix = 0
    for i, v in enumerate(a):
        total += v * i - prefix
        prefix += v
    print(2 * total)


main()
"""

PAIRWISE_DIFF_PLUS_ONE = PAIRWISE_DIFF_DOUBLE.replace("print(2 * total)", "print(total + 1)")
PAIRWISE_DIFF_UNSORTED = PAIRWISE_DIFF_DOUBLE.replace(
    "a = sorted(map(int, data[1 : 1 + n]))", "a = list(map(int, data[1 : 1 + n]))"
).replace("print(2 * total)", "print(total)")

PAIRWISE_DIFF_BRUTE = """
n = int(input())
a = list(map(int, input().split()))
print(sum(abs(a[i] - a[j]) for i in range(n) for j in range(i + 1, n)))
"""

PAIRWISE_DIFF_STATEMENT = """
# Total Distance

Given n integers, print the sum of |a_i − a_j| over all pairs i < j.

## Input
The first line contains n (1 ≤ n ≤ 2·10^5); the second line contains a_1, …, a_n (|a_i| ≤ 10^9).

## Output
Print one integer.
"""

DISTINCT_DESC = """
n = int(input())
a = sorted(set(map(int, input().split())), reverse=True)
print(" ".join(map(str, a)))
"""

DISTINCT_DESC_STATEMENT = """
# Distinct Values, Largest First

Given n integers, print each distinct value once, from the largest to the smallest, separated by
spaces.

## Input
The first line contains n (1 ≤ n ≤ 2·10^5); the second line contains n integers (|a_i| ≤ 10^9).

## Output
One line with the distinct values in decreasing order.
"""

DISTINCT_DESC_BRUTE = """
n = int(input())
a = list(map(int, input().split()))
out = []
for v in sorted(a, reverse=True):
    if v not in out:
        out.append(v)
print(" ".join(map(str, out)))
"""


def answers(put, panel) -> None:
    """Its answers: the panel's calibration of the seed, then every round's."""
    panel(SEED, 0, {m: [SORT_REF] * 4 for m in SOLVER_MODELS})
    # ---- demo/sort-numbers R1: the reference is wrong and three repairs do not fix it
    s = "demo/sort-numbers"
    put(
        s,
        "mutator",
        "round=1",
        mutation(
            "Sum |a_i - a_j| over all pairs in O(n log n): sort, then each element contributes against a prefix sum.",
            "Sorting alone does not aggregate pairwise distances; quadratic enumeration is too slow.",
            "sorting with prefix sums",
            PAIRWISE_DIFF_DOUBLE,
        ),
    )
    put(
        s,
        "writer",
        "round=1",
        written("Total Distance", PAIRWISE_DIFF_STATEMENT, ["3\n1 4 2\n", "2\n5 5\n"]),
    )
    put(s, "test_generator", "round=1;try=0", code(ARRAY_GENERATOR))
    put(s, "brute_force", "round=1;repair=0", code(PAIRWISE_DIFF_BRUTE))
    put(s, "input_validator", "round=1;repair=0", code(ARRAY_VALIDATOR))
    put(s, "oracle", "round=1;repair=0", oracle(["6", "0"]))
    put(
        s,
        "repair",
        "round=1;repair=0",
        repair("reference", "Each pair was counted twice; count it once.", PAIRWISE_DIFF_PLUS_ONE),
    )
    put(
        s,
        "repair",
        "round=1;repair=1",
        repair(
            "reference",
            "Remove the doubled count and keep the array as given.",
            PAIRWISE_DIFF_UNSORTED,
        ),
    )
    put(
        s,
        "repair",
        "round=1;repair=2",
        repair("reference", "Restore the factor that matches the examples.", PAIRWISE_DIFF_DOUBLE),
    )
    # ---- R2: not harder (everyone solves it)
    put(
        s,
        "mutator",
        "round=2",
        mutation(
            "Print each distinct value once, largest first.",
            "The parent prints duplicates and ascending order.",
            "deduplication",
            DISTINCT_DESC,
        ),
    )
    put(
        s,
        "writer",
        "round=2",
        written(
            "Distinct Values, Largest First", DISTINCT_DESC_STATEMENT, ["5\n3 1 3 2 1\n", "1\n7\n"]
        ),
    )
    put(s, "test_generator", "round=2;try=0", code(ARRAY_GENERATOR))
    put(s, "brute_force", "round=2;repair=0", code(DISTINCT_DESC_BRUTE))
    put(s, "input_validator", "round=2;repair=0", code(ARRAY_VALIDATOR))
    put(s, "oracle", "round=2;repair=0", oracle(["3 2 1", "7"]))
    panel(
        s,
        2,
        {m: [DISTINCT_DESC] * 4 for m in SOLVER_MODELS},
    )
