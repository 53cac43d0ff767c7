"""demo/pair-count: brute force disagrees -> repaired -> accepted (R1); the judge rejects false
difficulty (R2); a lexical near-duplicate (R3); stop: no_improve_patience."""

from __future__ import annotations

from ..answers import (
    GENERATOR_HEAD,
    PAIRS_CSV_VALIDATOR,
    PAIRS_VALIDATOR,
    SOLVER_MODELS,
    code,
    judge,
    mutation,
    oracle,
    repair,
    written,
)

SEED = "demo/pair-count"


PAIR_REF = """
n, k = map(int, input().split())
a = list(map(int, input().split()))
print(sum(1 for i in range(n) for j in range(i + 1, n) if a[i] + a[j] == k))
"""

PAIRS_LE = """
import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    a = sorted(map(int, data[2 : 2 + n]))
    i, j, count = 0, n - 1, 0
    while i < j:
        if a[i] + a[j] <= k:
            count += j - i
            i += 1
        else:
            j -= 1
    print(count)


main()
"""

PAIRS_LE_BISECT = """
from bisect import bisect_right

n, k = map(int, input().split())
a = sorted(map(int, input().split()))
total = 0
for i, v in enumerate(a):
    total += max(0, bisect_right(a, k - v, i + 1) - (i + 1))
print(total)
"""

PAIRS_LE_NAIVE = """
n, k = map(int, input().split())
a = list(map(int, input().split()))
print(sum(1 for i in range(n) for j in range(i + 1, n) if a[i] + a[j] <= k))
"""

PAIRS_LE_WITH_SELF = """
n, k = map(int, input().split())
a = sorted(map(int, input().split()))
from bisect import bisect_right
print(sum(bisect_right(a, k - v) - i for i, v in enumerate(a) if bisect_right(a, k - v) > i))
"""

PAIRS_GENERATOR = (
    GENERATOR_HEAD
    + """
sizes = {"small": rng.randint(1, 8), "medium": rng.randint(50, 800), "large": 20000, "stress": 50000}
n = sizes[args.tier]
bound = 10 if args.tier == "small" else 10**9
values = [rng.randint(1, bound) for _ in range(n)]
k = rng.randint(1, 2 * bound)
print(n, k)
print(" ".join(map(str, values)))
"""
)

PAIRS_STATEMENT = """
# Budget Pairs

There are n items with prices a_1, …, a_n. Count the pairs of distinct items (i, j) with i < j
whose total price a_i + a_j is at most k.

## Input
The first line contains two integers n and k (1 ≤ n ≤ 2·10^5, 0 ≤ k ≤ 2·10^9). The second line
contains n integers a_1, …, a_n (1 ≤ a_i ≤ 10^9).

## Output
Print one integer: the number of pairs i < j with a_i + a_j ≤ k.

## Constraints
The answer fits in a 64-bit signed integer.
"""

PAIRS_BRUTE_BUGGY = """
n, k = map(int, input().split())
a = list(map(int, input().split()))
print(sum(1 for i in range(n) for j in range(i, n) if a[i] + a[j] <= k))
"""

PAIRS_CSV = """
import sys


def main():
    lines = sys.stdin.read().split("\\n")
    values = [int(x) for x in lines[0].split(",")][::-1]
    k = int(lines[1])
    a = sorted(values)
    i, j, count = 0, len(a) - 1, 0
    while i < j:
        if a[i] + a[j] <= k:
            count += j - i
            i += 1
        else:
            j -= 1
    print(count)


main()
"""

PAIRS_CSV_BRUTE = """
lines = open(0).read().split("\\n")
a = [int(x) for x in lines[0].split(",")]
k = int(lines[1])
print(sum(1 for i in range(len(a)) for j in range(i + 1, len(a)) if a[i] + a[j] <= k))
"""

PAIRS_CSV_GENERATOR = (
    GENERATOR_HEAD
    + """
sizes = {"small": rng.randint(1, 8), "medium": rng.randint(50, 800), "large": 20000, "stress": 50000}
n = sizes[args.tier]
bound = 10 if args.tier == "small" else 10**9
values = [rng.randint(1, bound) for _ in range(n)]
print(",".join(map(str, values)))
print(rng.randint(1, 2 * bound))
"""
)

PAIRS_CSV_STATEMENT = """
# Budget Pairs, Reversed Ledger

The ledger lists the n prices in REVERSE order of purchase, separated by commas with no spaces,
on the first line; the second line holds the budget k. Count the pairs of distinct purchases whose
total price is at most k.

## Input
Line 1: the n prices (1 ≤ n ≤ 2·10^5, 1 ≤ price ≤ 10^9), comma-separated, reversed.
Line 2: the integer k (0 ≤ k ≤ 2·10^9).

## Output
Print the number of pairs.
"""

PAIRS_CSV_SPACES = """
n_line = input().split()
a = list(map(int, n_line))
k = int(input())
print(sum(1 for i in range(len(a)) for j in range(i + 1, len(a)) if a[i] + a[j] <= k))
"""


def answers(put, panel) -> None:
    """Its answers: the panel's calibration of the seed, then every round's."""
    panel(SEED, 0, {m: [PAIR_REF] * 4 for m in SOLVER_MODELS})
    # ---- demo/pair-count R1: brute force disagrees -> repaired -> accepted
    s = "demo/pair-count"
    put(
        s,
        "mutator",
        "round=1",
        mutation(
            "Count pairs whose sum is at most k with sorting and two pointers, for n up to 2e5.",
            "Checking all pairs is quadratic; an inequality needs a monotone sweep instead of a hash lookup.",
            "sorting with two pointers",
            PAIRS_LE,
        ),
    )
    put(
        s,
        "writer",
        "round=1",
        written("Budget Pairs", PAIRS_STATEMENT, ["4 5\n1 4 2 3\n", "3 0\n1 2 3\n"]),
    )
    put(s, "test_generator", "round=1;try=0", code(PAIRS_GENERATOR))
    put(s, "input_validator", "round=1;repair=0", code(PAIRS_VALIDATOR))
    put(s, "brute_force", "round=1;repair=0", code(PAIRS_BRUTE_BUGGY))
    put(s, "oracle", "round=1;repair=0", oracle(["4", "0"]))
    put(
        s,
        "repair",
        "round=1;repair=0",
        repair(
            "brute_force",
            "The brute force paired an item with itself (j started at i).",
            PAIRS_LE_NAIVE,
        ),
    )
    panel(
        s,
        1,
        {
            "solver-a": [PAIRS_LE, PAIRS_LE_NAIVE, PAIRS_LE_BISECT, PAIRS_LE_NAIVE],
            "solver-b": [PAIRS_LE_WITH_SELF, PAIRS_LE_NAIVE, PAIRS_LE_BISECT, PAIRS_LE_WITH_SELF],
        },
    )
    put(s, "judge", "round=1", judge(reasons=["standard, well-specified counting task"]))
    # ---- R2: judge rejects an artificial input format
    put(
        s,
        "mutator",
        "round=2",
        mutation(
            "Same counting, but the ledger arrives reversed and comma-separated with the budget on a second line.",
            "Solvers that assume whitespace-separated input will misread the data.",
            "input format twist",
            PAIRS_CSV,
        ),
    )
    put(
        s,
        "writer",
        "round=2",
        written(
            "Budget Pairs, Reversed Ledger", PAIRS_CSV_STATEMENT, ["3,2,4,1\n5\n", "1,2,3\n0\n"]
        ),
    )
    put(s, "test_generator", "round=2;try=0", code(PAIRS_CSV_GENERATOR))
    put(s, "input_validator", "round=2;repair=0", code(PAIRS_CSV_VALIDATOR))
    put(s, "brute_force", "round=2;repair=0", code(PAIRS_CSV_BRUTE))
    put(s, "oracle", "round=2;repair=0", oracle(["4", "0"]))
    panel(
        s,
        2,
        {
            "solver-a": [PAIRS_CSV, PAIRS_CSV_SPACES, PAIRS_LE, PAIRS_CSV_SPACES],
            "solver-b": [PAIRS_LE, PAIRS_CSV_SPACES, PAIRS_CSV, PAIRS_LE],
        },
    )
    put(
        s,
        "judge",
        "round=2",
        judge(
            artificial=True,
            reasons=[
                "the added difficulty is a reversed comma-separated input format, not a computational lift"
            ],
        ),
    )
    # ---- R3: a reworded copy of R1 is a lexical near-duplicate
    put(
        s,
        "mutator",
        "round=3",
        mutation(
            "Count pairs with sum at most k using binary search over the sorted prices.",
            "Quadratic enumeration is too slow for 2e5 prices.",
            "binary search over sorted values",
            PAIRS_LE_BISECT,
        ),
    )
    put(
        s,
        "writer",
        "round=3",
        written("Budget Pairs II", PAIRS_STATEMENT, ["4 5\n1 4 2 3\n", "3 0\n1 2 3\n"]),
    )
    put(s, "test_generator", "round=3;try=0", code(PAIRS_GENERATOR))
    put(s, "input_validator", "round=3;repair=0", code(PAIRS_VALIDATOR))
    put(s, "brute_force", "round=3;repair=0", code(PAIRS_LE_NAIVE))
    put(s, "oracle", "round=3;repair=0", oracle(["4", "0"]))
    panel(
        s,
        3,
        {
            "solver-a": [PAIRS_LE, PAIRS_LE_NAIVE, PAIRS_LE_WITH_SELF, PAIRS_LE_NAIVE],
            "solver-b": [PAIRS_LE_WITH_SELF, PAIRS_LE_NAIVE, PAIRS_LE_BISECT, PAIRS_LE_WITH_SELF],
        },
    )
