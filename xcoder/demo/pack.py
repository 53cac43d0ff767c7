"""The X-Coder demo pack: authored model answers, written as a replay cassette.

Every answer below was written by hand for the demo (none comes from a model): feature
extractions of three HumanEval seeds, one evolution round per category, stage-1 selections,
three statements (a Codeforces-style task, a LeetCode-style task, and a statement that leaks a
hint and is rejected by the gate), prompted test inputs, generator programs (a CYaRon one that
writes .in files, and one that prints the JSON test_cases object), and candidate
solutions from two solver endpoints (one of them wrong on larger inputs). Sampling, the gates,
the sandboxed runs and the vote are computed live by the engine.

The demo samples the whole tree (``subtree_leaves`` above the tree's leaf count), so the
authored stage-1 answers can name their features without knowing the random draw.

Regenerate the cassette after editing: ``python -m xcoder.demo.pack``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from evolution.demo.authored import write_authored_cassette

CASSETTE = Path(__file__).resolve().parent / "cassette.jsonl"
SEEDS = ("HumanEval/0", "HumanEval/3", "HumanEval/12")
SOLVERS = ("demo-solver-r (replayed)", "demo-solver-q (replayed)")
# The measurement panel (replayed from this cassette): one model that solves the accepted
# tasks, one whose answers are wrong on larger inputs, K = 2 each: pass@1 0.5.
PANEL = "demo-xcoder-panel"
PANEL_MODELS = ("xcoder-panel-r", "xcoder-panel-q")
DEMO_SETTINGS = {
    "measure_k": 2,
    "num_tasks": 3,
    "subtree_leaves": 64,
    "subtree_categories": 6,
    "style_mix": {"codeforces": 50, "leetcode": 50},  # sample_seed 42: CF, LeetCode, CF
    "test_mode": "both",
    "candidates_per_endpoint": 2,
    "min_candidates": 3,
    # The authored answers were written for these (the campaign defaults are the document's:
    # evolve-then-merge per seed, and reasoning answers with think tags).
    "evolution_scope": "tree",
    "think_tags": "off",
}

EXTRACTIONS = {
    "HumanEval/0": {
        "programming language": ["Python"],
        "problem type": ["pairwise comparison", "threshold check"],
        "algorithm": {"sorting algorithms": ["built-in sort"], "search": ["adjacent scan"]},
        "data structures": ["list"],
        "implementation logic": ["nested iteration"],
        "complexity analysis": ["Time Complexity: O(n^2)"],
        "purpose": "Decide whether two numbers are closer than a threshold.",
    },
    "HumanEval/3": {
        "programming language": ["Python"],
        "problem type": ["running balance"],
        "algorithm": {"accumulation": ["running total"]},
        "data structures": ["list"],
        "implementation logic": ["early exit"],
        "complexity analysis": ["Time Complexity: O(n)"],
        "optimization techniques": ["single pass"],
    },
    "HumanEval/12": {
        "programming language": ["Python"],
        "problem type": ["string selection"],
        "algorithm": {"search": ["linear maximum search"]},
        "data structures": ["list", "string"],
        "implementation logic": ["iterative"],
        "complexity analysis": ["Time Complexity: O(n)"],
    },
}

EVOLUTIONS = {
    "algorithm": {
        "sorting algorithms": {"built-in sort": ["stable key sort"], "counting sort": []},
        "search": {
            "adjacent scan": [],
            "linear maximum search": ["first-maximum tie break"],
            "two-ended scan": [],
        },
        "accumulation": {"running total": ["running minimum of totals"], "windowed total": []},
    },
    "data structures": ["list", "string", "fixed-size buffer", "monotone stack"],
    "problem type": {
        "pairwise comparison": [],
        "threshold check": [],
        "running balance": [],
        "string selection": [],
        "segment counting": [],
    },
    "implementation logic": ["nested iteration", "early exit", "iterative", "index arithmetic"],
    "complexity analysis": [
        "Time Complexity: O(n^2)",
        "Time Complexity: O(n)",
        "Time Complexity: O(n log n)",
    ],
    "optimization techniques": ["single pass", "incremental update"],
}

LANTERN = """# Lantern Festival Budget

The town of Brightwater is preparing its lantern festival. The organisers received offers
from several lantern makers; each offer is a whole number of coins that the maker will donate
if their lanterns are chosen. The committee may accept exactly k offers and wants the largest
total donation. Because makers may repeat an amount, equal offers count separately. Compute
the best total the committee can collect, so that the treasurer can plan the festival budget
before any contract is signed.

## Input
The first line contains two integers n and k, the number of offers and the number of offers
the committee accepts. The second line contains n integers a_1, ..., a_n, the offers.

## Output
Print one integer: the largest possible sum of exactly k offers.

## Constraints
1 <= k <= n <= 200000 and 0 <= a_i <= 10^9 for every offer.

### Example 1
Input
```
5 2
4 1 7 3 7
```
Output
```
14
```
Explanation
The two offers of 7 coins are accepted, giving 7 + 7 = 14 coins in total.

### Example 2
Input
```
3 3
2 9 5
```
Output
```
16
```
Explanation
All three offers must be accepted, so the total is 2 + 9 + 5 = 16 coins.
"""

GAUGES = """# Reservoir Gauge Readings

A reservoir keeper writes down the daily change of the water level as a list of integers
`changes`: a positive number means the level rose that day, a negative number that it fell.
An inspector wants to know how often the water did not drop over a stretch of exactly `k`
consecutive days, that is, for how many starting days i the total change of days i, i + 1,
..., i + k - 1 is zero or more. Stretches overlap: every starting day with k days after it
(itself included) counts once. Write the function `stable_stretches(changes, k)` that returns
this count as an integer, so that the keeper can report it at the end of the season.

## Constraints
1 <= k <= len(changes) <= 100000 and -10^4 <= changes[i] <= 10^4.

### Example 1:
Input: changes = [2, -3, 1, 4], k = 2
Output: 1
Explanation: the stretches are [2, -3] with total -1, [-3, 1] with total -2 and [1, 4] with
total 5; only the last one has a total of zero or more.

### Example 2:
Input: changes = [0, 0, 0], k = 3
Output: 1
Explanation: there is a single stretch of three days and its total change is 0.
"""

LEAKY = LANTERN.replace("# Lantern Festival Budget", "# Festival Budget, Again").replace(
    "Compute\nthe best total",
    "Hint: a counting sort of the offers helps. Compute\nthe best total",
)

CF_CORRECT = """Reading the offers and keeping the k largest.

```python
import sys
data = sys.stdin.read().split()
n, k = int(data[0]), int(data[1])
values = sorted(map(int, data[2:2 + n]), reverse=True)
print(sum(values[:k]))
```"""
CF_CORRECT_B = """```python
import heapq, sys
n, k, *a = map(int, sys.stdin.read().split())
print(sum(heapq.nlargest(k, a[:n])))
```"""
CF_WRONG = """```python
import sys
n, k, *a = map(int, sys.stdin.read().split())
print(sum(sorted(a[:n], reverse=True)[:min(k, 3)]))
```"""
CF_TWO_BLOCKS = "```python\nprint(0)\n```\nAlternatively:\n```python\nprint(1)\n```"

LC_CORRECT = """```python
def stable_stretches(changes, k):
    total = sum(changes[:k])
    count = 1 if total >= 0 else 0
    for i in range(k, len(changes)):
        total += changes[i] - changes[i - k]
        if total >= 0:
            count += 1
    return count
```"""
LC_CORRECT_B = """```python
def stable_stretches(changes, k):
    return sum(1 for i in range(len(changes) - k + 1) if sum(changes[i:i + k]) >= 0)
```"""
# Misses the last stretch: wrong whenever it counts.
LC_WRONG = """```python
def stable_stretches(changes, k):
    return sum(1 for i in range(len(changes) - k) if sum(changes[i:i + k]) >= 0)
```"""
LC_LONG = (
    "I think this is hard. " * 40
    + "\n```python\ndef stable_stretches(changes, k)\n    return 0\n```"
)

CF_TESTS = [
    ("boundary", "one offer", "1 1\n5\n"),
    ("nominal", "small", "4 2\n1 2 3 4\n"),
    ("nominal", "ties", "3 2\n5 5 5\n"),
    ("complex", "k close to n", "6 4\n9 1 8 2 7 3\n"),
    ("stress", "all accepted", "8 8\n1 2 3 4 5 6 7 8\n"),
    ("stress", "large values", "5 5\n1000000000 999999999 7 0 3\n"),
    ("boundary", "zeros", "4 3\n0 0 0 0\n"),
]
LC_TESTS = [
    ("boundary", "single day", "[5]\n1\n"),
    ("boundary", "single negative day", "[-5]\n1\n"),
    ("nominal", "example", "[2, -3, 1, 4]\n2\n"),
    ("nominal", "all zero", "[0, 0, 0]\n3\n"),
    ("complex", "alternating", "[3, -1, -1, 3, -4, 2, 2]\n3\n"),
    ("complex", "mostly falling", "[-1, -2, 5, -1, -1, -1, 4]\n2\n"),
    ("stress", "long rise", "[1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n4\n"),
    ("stress", "long mixed", "[4, -5, 3, -2, 1, 0, -1, 2, -3, 5, -4, 2]\n5\n"),
]

# A CYaRon generator as the D.2 prompt asks for it (one .in file per test, named by category);
# the sandbox runs it with the CYaRon library shipped along.
GENERATOR = """```python
import argparse
import random

from cyaron import IO

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=42, help="Random seed for reproducibility")
args = parser.parse_args()
random.seed(args.seed)
# stress: random offers with k close to n, so that many offers must be accepted.
for size in (6, 9, 12):
    with IO(f"stress_random_n{size}.in", disable_output=True) as io:
        io.input_writeln(size, size - 1)
        io.input_writeln([random.randint(0, 10**9) for _ in range(size)])
```"""

LC_GENERATOR = """```python
import argparse
import json
import random

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=42, help="Random seed for reproducibility")
args = parser.parse_args()
random.seed(args.seed)
cases = []
# Random daily changes; stretches of a third of the season.
for size in (9, 15):
    changes = [random.randint(-5, 5) for _ in range(size)]
    cases.append({"category": "stress", "description": f"random season of {size} days",
                  "input_string": json.dumps(changes) + "\\n" + str(size // 3) + "\\n"})
print(json.dumps({"test_cases": cases}))
```"""


def _selection(features: list[tuple[str, str, str]], strategy: str) -> str:
    """A stage-1 answer selecting ``features`` = (category, parent path, leaf)."""
    selected: dict = {}
    roles: dict = {}
    for category, parent, leaf in features:
        node = selected.setdefault(category, {})
        role = roles.setdefault(category, {})
        for name in parent.split(" / ") if parent else []:
            node = node.setdefault(name, {})
            role = role.setdefault(name, {})
        node[leaf] = {"feature": leaf, "potential_use": f"Shapes the task through {leaf}."}
        role[leaf] = {"potential_use": f"Shapes the task through {leaf}."}
    return json.dumps(
        {
            "feature_roles_tree": roles,
            "selected_features_tree": selected,
            "integration_strategy": strategy,
        }
    )


def _tagged(data: dict) -> str:
    return "Features follow.\n<begin>" + json.dumps(data) + "<end>"


def _task(title: str, question: str, **extra) -> str:
    return "```json\n" + json.dumps({"title": title, "question": question, **extra}) + "\n```"


def _tests(rows) -> str:
    return json.dumps(
        {
            "test_cases": [
                {"idx": i, "category": c, "description": d, "input_string": s}
                for i, (c, d, s) in enumerate(rows)
            ]
        }
    )


def answers() -> dict[tuple[str, str], str]:
    """{(role, replay key): content} of every authored answer."""
    table: dict[tuple[str, str], str] = {}
    for seed, data in EXTRACTIONS.items():
        table[("xcoder_extract", f"xcoder;extract;seed={seed};role=xcoder_extract")] = _tagged(data)
    for category, tree in EVOLUTIONS.items():
        table[
            ("xcoder_evolve", f"xcoder;evolve;round=1;category={category};role=xcoder_evolve")
        ] = _tagged({category: tree})
    table[("xcoder_select", "xcoder;task=0;select;role=xcoder_select")] = _selection(
        [
            ("algorithm", "sorting algorithms / built-in sort", "stable key sort"),
            ("problem type", "", "threshold check"),
            ("optimization techniques", "", "single pass"),
        ],
        "Choosing exactly k values of largest total: the order of values decides, and one "
        "pass over the ordered values gives the total.",
    )
    table[("xcoder_select", "xcoder;task=1;select;role=xcoder_select")] = _selection(
        [
            ("algorithm", "accumulation", "windowed total"),
            ("problem type", "", "segment counting"),
            ("optimization techniques", "", "incremental update"),
        ],
        "Count fixed-length segments whose total is non-negative; each total is updated "
        "from the previous one instead of being recomputed.",
    )
    table[("xcoder_select", "xcoder;task=2;select;role=xcoder_select")] = _selection(
        [
            ("algorithm", "sorting algorithms", "counting sort"),
            ("problem type", "", "threshold check"),
        ],
        "A budget task where ordering bounded values decides the answer.",
    )
    table[("xcoder_write", "xcoder;task=0;write;style=codeforces;role=xcoder_write")] = _task(
        "Lantern Festival Budget", LANTERN
    )
    table[("xcoder_write", "xcoder;task=1;write;style=leetcode;role=xcoder_write")] = _task(
        "Reservoir Gauge Readings",
        GAUGES,
        entry_point="stable_stretches",
        starter_code="def stable_stretches(changes, k):\n    pass\n",
    )
    table[("xcoder_write", "xcoder;task=2;write;style=codeforces;role=xcoder_write")] = _task(
        "Festival Budget, Again", LEAKY
    )
    table[("xcoder_tests", "xcoder;task=0;tests;role=xcoder_tests")] = _tests(CF_TESTS)
    table[("xcoder_generator", "xcoder;task=0;generator;role=xcoder_generator")] = GENERATOR
    table[("xcoder_tests", "xcoder;task=1;tests;role=xcoder_tests")] = _tests(LC_TESTS)
    table[("xcoder_generator", "xcoder;task=1;generator;role=xcoder_generator")] = LC_GENERATOR
    solutions = {
        0: {
            (SOLVERS[0], 0): CF_CORRECT,
            (SOLVERS[0], 1): CF_WRONG,
            (SOLVERS[1], 0): CF_CORRECT_B,
            (SOLVERS[1], 1): CF_TWO_BLOCKS,
        },
        1: {
            (SOLVERS[0], 0): LC_CORRECT,
            (SOLVERS[0], 1): LC_WRONG,
            (SOLVERS[1], 0): LC_CORRECT_B,
            (SOLVERS[1], 1): LC_LONG,
        },
    }
    for index, by_slot in solutions.items():
        for (endpoint, sample), content in by_slot.items():
            key = (
                f"xcoder;task={index};solve;endpoint={endpoint};sample={sample};role=xcoder_solver"
            )
            table[("xcoder_solver", key)] = content
    table.update(panel_answers())
    return table


def panel_answers() -> dict[tuple[str, str], str]:
    """The measurement panel's attempts at the two accepted tasks, keyed as the shared
    measurement stage asks them (by the hash of the statement the campaign stores)."""
    from ..engine import prompts

    def statement_hash(statement: str) -> str:
        # evolution.measurement.panel.statement_hash (tests/xcoder/test_demo.py checks they
        # agree); kept here so the pack writes its cassette without Django.
        return hashlib.sha256(statement.encode("utf-8")).hexdigest()[:16]

    table = {}
    tasks = (
        (
            prompts.parse_task(_task("Lantern Festival Budget", LANTERN), style="codeforces"),
            (CF_CORRECT, CF_WRONG),
        ),
        (
            prompts.parse_task(
                _task(
                    "Reservoir Gauge Readings",
                    GAUGES,
                    entry_point="stable_stretches",
                    starter_code="def stable_stretches(changes, k):\n    pass\n",
                ),
                style="leetcode",
            ),
            (LC_CORRECT, LC_WRONG),
        ),
    )
    for written, by_model in tasks:
        digest = statement_hash(written.question)
        for model, content in zip(PANEL_MODELS, by_model, strict=True):
            for attempt in range(DEMO_SETTINGS["measure_k"]):
                key = f"measure;statement={digest};model={model};attempt={attempt}"
                table[("solver", key)] = content
    return table


def write_cassette(path: Path = CASSETTE) -> int:
    return write_authored_cassette(path, answers())


if __name__ == "__main__":
    import os

    import django

    # The statement parser the panel keys hash comes through imports the gateway's models.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchapp.settings")
    django.setup()
    print(f"{write_cassette()} answers written to {CASSETTE}")
