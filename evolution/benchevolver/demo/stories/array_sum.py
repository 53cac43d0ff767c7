"""demo/array-sum: accepted (R1), accepted again from the new parent (R2: depth 2);
stop: max_accepted_per_seed."""

from __future__ import annotations

from ..answers import (
    ARRAY_VALIDATOR,
    GENERATOR_HEAD,
    SOLVER_MODELS,
    code,
    judge,
    mutation,
    oracle,
    written,
)

SEED = "demo/array-sum"


SUM_REF = """
import sys

data = sys.stdin.read().split()
n = int(data[0])
print(sum(int(x) for x in data[1 : 1 + n]))
"""

KADANE = """
import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    best = cur = None
    for token in data[1 : 1 + n]:
        v = int(token)
        cur = v if cur is None or cur < 0 else cur + v
        best = cur if best is None or cur > best else best
    print(best)


main()
"""

KADANE_ALT = """
n = int(input())
a = list(map(int, input().split()))
best = a[0]
run = 0
for v in a:
    run = max(v, run + v)
    best = max(best, run)
print(best)
"""

KADANE_ZERO = """
n = int(input())
a = list(map(int, input().split()))
best = 0
run = 0
for v in a:
    run = max(0, run + v)
    best = max(best, run)
print(best)
"""

SUBARRAY_NAIVE = """
n = int(input())
a = list(map(int, input().split()))
best = None
for i in range(n):
    s = 0
    for j in range(i, n):
        s += a[j]
        if best is None or s > best:
            best = s
print(best)
"""

ARRAY_GENERATOR = (
    GENERATOR_HEAD
    + """
sizes = {"small": rng.randint(1, 8), "medium": rng.randint(50, 800), "large": 20000, "stress": 50000}
n = sizes[args.tier]
bound = 10 if args.tier == "small" else 10**9
values = [rng.randint(-bound, bound) for _ in range(n)]
if args.tier == "small" and args.seed % 2 == 0:
    values = [-abs(v) - 1 for v in values]
print(n)
print(" ".join(map(str, values)))
"""
)

MAX_SUBARRAY_STATEMENT = """
# Maximum Subarray Sum

You are given an array of n integers. Choose a non-empty contiguous subarray so that the sum of
its elements is as large as possible, and print that sum.

## Input
The first line contains one integer n (1 ≤ n ≤ 2·10^5). The second line contains n integers
a_1, …, a_n (|a_i| ≤ 10^9).

## Output
Print one integer: the maximum sum of a non-empty contiguous subarray.

## Constraints
The answer fits in a 64-bit signed integer.
"""

ONE_DELETION = """
import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    a = list(map(int, data[1 : 1 + n]))
    keep = a[0]
    drop = None
    best = a[0]
    for v in a[1:]:
        drop = keep if drop is None else max(drop + v, keep)
        keep = max(keep + v, v)
        best = max(best, keep, drop)
    print(best)


main()
"""

ONE_DELETION_BRUTE = """
n = int(input())
a = list(map(int, input().split()))
best = None
for i in range(n):
    s = 0
    low = None
    for j in range(i, n):
        s += a[j]
        low = a[j] if low is None else min(low, a[j])
        value = s - low if j > i and low < 0 else s
        if best is None or value > best:
            best = value
print(best)
"""

ONE_DELETION_NAIVE = """
n = int(input())
a = list(map(int, input().split()))
best = max(a)
for skip in range(-1, n):
    b = a[:skip] + a[skip + 1 :] if skip >= 0 else a
    run = 0
    top = b[0] if b else best
    for v in b:
        run = max(v, run + v)
        top = max(top, run)
    best = max(best, top)
print(best)
"""

ONE_DELETION_STATEMENT = """
# Best Subarray With One Deletion

You are given an array of n integers. Choose a contiguous subarray, then you may delete at most
one element from it, as long as at least one element remains. Print the largest possible sum of
the remaining elements.

## Input
The first line contains one integer n (1 ≤ n ≤ 2·10^5). The second line contains n integers
a_1, …, a_n (|a_i| ≤ 10^9).

## Output
Print one integer: the maximum achievable sum.

## Constraints
The answer fits in a 64-bit signed integer.
"""


def answers(put, panel) -> None:
    """Its answers: the panel's calibration of the seed, then every round's."""
    panel(SEED, 0, {m: [SUM_REF] * 4 for m in SOLVER_MODELS})
    # ---- demo/max-subarray R1: accepted
    s = "demo/array-sum"
    put(
        s,
        "mutator",
        "round=1",
        mutation(
            "Instead of summing the whole array, find the best contiguous subarray with a one-pass running maximum (Kadane).",
            "Summing everything ignores that dropping a negative prefix or suffix can increase the total.",
            "dynamic programming over prefixes",
            KADANE,
        ),
    )
    put(
        s,
        "writer",
        "round=1",
        written(
            "Maximum Subarray Sum", MAX_SUBARRAY_STATEMENT, ["5\n1 -2 3 4 -1\n", "3\n-5 -1 -3\n"]
        ),
    )
    put(s, "test_generator", "round=1;try=0", code(ARRAY_GENERATOR))
    put(s, "brute_force", "round=1;repair=0", code(SUBARRAY_NAIVE))
    put(s, "input_validator", "round=1;repair=0", code(ARRAY_VALIDATOR))
    put(s, "oracle", "round=1;repair=0", oracle(["7", "-1"]))
    panel(
        s,
        1,
        {
            "solver-a": [KADANE, KADANE_ALT, SUBARRAY_NAIVE, SUBARRAY_NAIVE],
            "solver-b": [KADANE_ALT, KADANE_ZERO, SUBARRAY_NAIVE, SUBARRAY_NAIVE],
        },
    )
    put(
        s,
        "judge",
        "round=1",
        judge(reasons=["natural statement; difficulty comes from the linear-time idea"]),
    )
    # ---- R2: accepted from the new parent (depth 2)
    put(
        s,
        "mutator",
        "round=2",
        mutation(
            "Allow deleting one element of the chosen subarray: track the best sum ending here with and without a deletion.",
            "Kadane's single state cannot bridge one very negative element between two good runs.",
            "two-state dynamic programming",
            ONE_DELETION,
        ),
    )
    put(
        s,
        "writer",
        "round=2",
        written(
            "Best Subarray With One Deletion",
            ONE_DELETION_STATEMENT,
            ["6\n1 -2 0 3 -10 4\n", "3\n-5 -1 -3\n"],
        ),
    )
    put(s, "test_generator", "round=2;try=0", code(ARRAY_GENERATOR))
    put(s, "brute_force", "round=2;repair=0", code(ONE_DELETION_BRUTE))
    put(s, "input_validator", "round=2;repair=0", code(ARRAY_VALIDATOR))
    put(s, "oracle", "round=2;repair=0", oracle(["7", "-1"]))
    panel(
        s,
        2,
        {
            "solver-a": [ONE_DELETION, KADANE, ONE_DELETION_NAIVE, KADANE_ALT],
            "solver-b": [KADANE, ONE_DELETION_NAIVE, ONE_DELETION, KADANE_ZERO],
        },
    )
    put(
        s,
        "judge",
        "round=2",
        judge(reasons=["clear rule for the deletion; examples cover the all-negative case"]),
    )
