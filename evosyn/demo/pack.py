"""The EvoSyn demo pack: authored model answers, written as a replay cassette.

Every answer below was written by hand for the demo (none comes from a model): four candidate
solutions of the HumanEval seed (two right, two wrong) and four candidate testings, each a
unit-test list (one of them wrong, a "hallucinated" testing), two mutations of the filtering strategy (one crashes, one is the
document's Figure 3 program), three synthesized problems with their solutions and testings, and a
measurement panel's attempts at the problems that are kept. The pass matrices, the strategy
scores, the MAP-Elites search, the pruning and the panel verdicts are computed live: every
program runs in the sandbox.

Regenerate the cassette after editing: ``python -m evosyn.demo.pack``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from evolution.demo.authored import write_authored_cassette

CASSETTE = Path(__file__).resolve().parent / "cassette.jsonl"
SEED = "HumanEval/0"
SEED_SET = "evosyn-demo-seeds"
PANEL = "demo-evosyn-panel"
PANEL_MODELS = ("evosyn-panel-r", "evosyn-panel-q")
DEMO_SETTINGS = {
    "solutions_per_problem": 4,
    "tests_per_problem": 4,
    "test_calls": 1,
    "max_iterations": 2,
    "num_islands": 2,
    "synth_problems": 3,
    "measure_k": 2,
}

SEED_SOLUTIONS = [
    "from typing import List\n\n\ndef has_close_elements(numbers: List[float], threshold: float)"
    " -> bool:\n    for i, a in enumerate(numbers):\n        for j, b in enumerate(numbers):\n"
    "            if i != j and abs(a - b) < threshold:\n                return True\n"
    "    return False\n",
    "def has_close_elements(numbers, threshold):\n    ordered = sorted(numbers)\n"
    "    return any(b - a < threshold for a, b in zip(ordered, ordered[1:]))\n",
    "def has_close_elements(numbers, threshold):\n    return False\n",
    "def has_close_elements(numbers, threshold):\n    return True\n",
]
# Four candidate testings (each one test-writer answer: a unit-test list). The third is wrong
# (1.0 and 2.0 are not closer than 0.5): a hallucinated testing. The second holds two unit
# tests: "always True" passes its first and fails its second, so it fails the testing.
SEED_TESTINGS = [
    [{"input": [[1.0, 2.0, 3.0], 0.5], "output": False}],
    [
        {"input": [[1.0, 2.8, 3.0, 4.0], 0.3], "output": True},
        {"input": [[1.0, 2.0, 3.0], 0.5], "output": False},
    ],
    [{"input": [[1.0, 2.0], 0.5], "output": True}],
    [{"input": [[1.0, 1.1], 0.5], "output": True}],
]

CRASHING_STRATEGY = "import sys\nraise RuntimeError('this strategy is broken')\n"
# The document's Figure 3 strategy, as a complete program.
FIGURE_3 = """import json, sys
data = json.load(sys.stdin)
solution_id_list = data["solution_id_list"]
testing_id_list = data["testing_id_list"]
solution_pass_testing = data["solution_pass_testing"]
testing_accept_solutions = data["testing_accept_solutions"]
total_testings = len(testing_id_list)
solution_quality = {s: len(solution_pass_testing[s]) / total_testings for s in solution_id_list}
testing_quality = {}
total_quality_all = sum(solution_quality.values())
total_solutions = len(solution_id_list)
for t in testing_id_list:
    passed = testing_accept_solutions[t]
    total_passed = sum(solution_quality[s] for s in passed)
    passed_avg = total_passed / len(passed) if passed else 0.0
    n_failed = total_solutions - len(passed)
    failed_avg = (total_quality_all - total_passed) / n_failed if n_failed else 0.0
    testing_quality[t] = passed_avg - failed_avg
print(json.dumps({
    "solutions": sorted(solution_id_list, key=lambda x: solution_quality[x], reverse=True),
    "testings": sorted(testing_id_list, key=lambda x: testing_quality[x], reverse=True),
    "testing_scores": testing_quality,
}))
"""

SUM_EVENS = (
    "Given a list of integers `values`, return the sum of the even numbers in it.\n\n"
    "```python\ndef sum_evens(values: list[int]) -> int:\n```\n\n"
    "Example: `sum_evens([1, 2, 3, 4])` returns `6`; an empty list gives `0`."
)
SUM_EVENS_RIGHT = "def sum_evens(values):\n    return sum(v for v in values if v % 2 == 0)\n"
SUM_EVENS_WRONG = "def sum_evens(values):\n    return sum(values)\n"
BLANK = (
    "Write `is_blank(text: str) -> bool` returning whether a string holds only spaces, tabs "
    "and newlines (the empty string counts as blank). Any Unicode text may be given."
)
BLANK_RIGHT = "def is_blank(text):\n    return text.strip() == ''\n"
TRIPLE = (
    "Implement `triple_it(n: int) -> int` that multiplies an integer by three and returns the "
    "product; negative numbers and zero included."
)
SYNTHESIZED = [
    (
        "Sum of evens",
        "sum_evens",
        SUM_EVENS,
        [
            SUM_EVENS_RIGHT,
            "def sum_evens(values):\n    total = 0\n    for v in values:\n"
            "        if v % 2 == 0:\n            total += v\n    return total\n",
            SUM_EVENS_WRONG,
            "def sum_evens(values):\n    return sum(v for v in values if v % 2)\n",
        ],
        [
            [{"input": [[1, 2, 3, 4]], "output": 6}, {"input": [[]], "output": 0}],
            [{"input": [[2, 4]], "output": 6}, {"input": [[1, 2]], "output": 2}],
            [{"input": [[1, 3, 5]], "output": 0}],
            [{"input": [[]], "output": 0}, {"input": [[0]], "output": 0}],
        ],
    ),
    (
        "Blank text",
        "is_blank",
        BLANK,
        [
            BLANK_RIGHT,
            "def is_blank(text):\n    return not text.strip()\n",
            "def is_blank(text):\n    return all(c.isspace() for c in text)\n",
            "def is_blank(text):\n    return len(text.split()) == 0\n",
        ],
        [
            [{"input": [""], "output": True}],
            [{"input": ["  "], "output": True}, {"input": ["\t\n"], "output": True}],
            [{"input": ["a"], "output": False}],
            [{"input": [" b "], "output": False}],
        ],
    ),
    (
        "Triple",
        "triple_it",
        TRIPLE,
        ["def triple_it(n):\n    return 3 * n\n"] * 4,
        [
            [{"input": [1], "output": 3}],
            [{"input": [0], "output": 0}],
            [{"input": [-2], "output": -6}],
            [{"input": [5], "output": 15}, {"input": [-1], "output": -3}],
        ],
    ),
]
# The panel's attempts at every synthesized problem (only the kept ones are measured): one
# model right, the other wrong.
PANEL_SOLUTIONS = {
    SUM_EVENS: (SUM_EVENS_RIGHT, SUM_EVENS_WRONG),
    BLANK: (BLANK_RIGHT, "def is_blank(text):\n    return text == ''\n"),
    TRIPLE: ("def triple_it(n):\n    return 3 * n\n", "def triple_it(n):\n    return n + 3\n"),
}


def fenced(code: str) -> str:
    return f"Here is my answer.\n\n```python\n{code}```\n"


def _tests(tests: list[dict]) -> str:
    return "```json\n" + json.dumps(tests, indent=1) + "\n```"


def statement_hash(statement: str) -> str:
    """``evolution.measurement.panel.statement_hash``, the key the measurement stage asks by
    (tests/evosyn/test_demo.py checks they agree); kept here so the pack needs no Django."""
    return hashlib.sha256(statement.strip().encode("utf-8")).hexdigest()[:16]


def answers() -> dict[tuple[str, str], str]:
    """{(role, replay key): content} of every authored answer."""
    table: dict[tuple[str, str], str] = {}
    for i, code in enumerate(SEED_SOLUTIONS):
        table[("solver", f"evosyn;seed={SEED};solution={i};role=solver")] = fenced(code)
    for call, testing in enumerate(SEED_TESTINGS):
        key = f"evosyn;seed={SEED};tests={call};role=test_writer"
        table[("test_writer", key)] = _tests(testing)
    for number, code in enumerate((CRASHING_STRATEGY, FIGURE_3), 1):
        table[("strategist", f"evosyn;iteration={number};role=strategist")] = fenced(code)
    for slot, (title, entry, statement, solutions, testings) in enumerate(SYNTHESIZED):
        table[("synthesizer", f"evosyn;synth={slot};role=synthesizer")] = json.dumps(
            {"title": title, "entry_point": entry, "statement": statement}
        )
        for i, code in enumerate(solutions):
            table[("solver", f"evosyn;synth={slot};solution={i};role=solver")] = fenced(code)
        for call, testing in enumerate(testings):
            key = f"evosyn;synth={slot};tests={call};role=test_writer"
            table[("test_writer", key)] = _tests(testing)
    return table


def panel_answers() -> dict[tuple[str, str], str]:
    """The measurement panel's attempts, keyed as the shared measurement stage asks them."""
    table = {}
    for statement, by_model in PANEL_SOLUTIONS.items():
        digest = statement_hash(statement)
        for model, code in zip(PANEL_MODELS, by_model, strict=True):
            for attempt in range(DEMO_SETTINGS["measure_k"]):
                key = f"measure;statement={digest};model={model};attempt={attempt}"
                table[("solver", key)] = fenced(code)
    return table


def write_cassette(path: Path = CASSETTE) -> int:
    return write_authored_cassette(path, {**answers(), **panel_answers()})


if __name__ == "__main__":
    print(f"{write_cassette()} answers written to {CASSETTE}")
