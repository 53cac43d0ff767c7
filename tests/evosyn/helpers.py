"""An EvoSyn world: the HumanEval seed HumanEval/0 (its check program is the human test), one
endpoint on the loopback server, and a scripted table of answers keyed like the replay
cassettes (role, replay key). Every execution is live in the sandbox. The seed's tests, the
Figure 3 strategy, the crashing one and the sum-of-evens statement are the demo pack's."""

from __future__ import annotations

import json

import pytest

from evolution.importers import import_seeds
from evolution.models import ModelEndpoint, Problem, ProblemSet
from evosyn.demo.pack import BLANK, FIGURE_3, SEED_TESTINGS, SUM_EVENS
from evosyn.demo.pack import CRASHING_STRATEGY as CRASHING
from tests.evolution.benchevolver.helpers import KeyedResponder
from tests.support.answers import fenced
from tests.support.fake_openai import FakeOpenAI

SEED = "HumanEval/0"

CORRECT_A = """from typing import List


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    for i, a in enumerate(numbers):
        for j, b in enumerate(numbers):
            if i != j and abs(a - b) < threshold:
                return True
    return False
"""
CORRECT_B = """def has_close_elements(numbers, threshold):
    ordered = sorted(numbers)
    return any(b - a < threshold for a, b in zip(ordered, ordered[1:]))
"""
ALWAYS_FALSE = "def has_close_elements(numbers, threshold):\n    return False\n"
ALWAYS_TRUE = "def has_close_elements(numbers, threshold):\n    return True\n"

# The tests import these from here: the demo pack's strategies (the document's Figure 3, one that
# crashes) and the seed's four testings (SEED_TESTINGS, each one test-writer answer, a unit-test
# list: t2 expects True where the answer is False, a hallucinated testing; t1 holds two unit
# tests, and "always True" passes the first and fails the second, so it fails t1 as a whole).
__all__ = ["CRASHING", "FIGURE_3", "SEED_TESTINGS"]

SUM_EVENS_STATEMENT = SUM_EVENS
SUM_EVENS_SOLUTIONS = [
    "def sum_evens(values):\n    return sum(v for v in values if v % 2 == 0)\n",
    "def sum_evens(values):\n    total = 0\n    for v in values:\n"
    "        if v % 2 == 0:\n            total += v\n    return total\n",
    "def sum_evens(values):\n    return sum(values)\n",
    "def sum_evens(values):\n    return sum(v for v in values if v % 2)\n",
]
SUM_EVENS_TESTINGS = [
    [{"input": [[1, 2, 3, 4]], "output": 6}, {"input": [[]], "output": 0}],
    [{"input": [[2, 4]], "output": 6}, {"input": [[1, 2]], "output": 2}],
    [{"input": [[1, 3, 5]], "output": 0}],
    [{"input": [[]], "output": 0}, {"input": [[0]], "output": 0}],
]

IS_EMPTY_STATEMENT = BLANK
IS_EMPTY_SOLUTIONS = [
    "def is_blank(text):\n    return text.strip() == ''\n",
    "def is_blank(text):\n    return not text.strip()\n",
    "def is_blank(text):\n    return all(c.isspace() for c in text)\n",
    "def is_blank(text):\n    return len(text.split()) == 0\n",
]
IS_EMPTY_TESTINGS = [
    [{"input": [""], "output": True}],
    [{"input": ["  "], "output": True}, {"input": ["\t\n"], "output": True}],
    [{"input": ["a"], "output": False}],
    [{"input": [" b "], "output": False}],
]

DOUBLE_STATEMENT = (
    "Implement `triple_it(n: int) -> int` that multiplies an integer by three and returns the "
    "product; negative numbers and zero included."
)
DOUBLE_SOLUTION = "def triple_it(n):\n    return 3 * n\n"
DOUBLE_TESTINGS = [
    [{"input": [1], "output": 3}],
    [{"input": [0], "output": 0}],
    [{"input": [-2], "output": -6}],
    [{"input": [5], "output": 15}, {"input": [-1], "output": -3}],
]


def tests_answer(tests: list[dict]) -> str:
    return "```json\n" + json.dumps(tests, indent=1) + "\n```"


def problem_answer(title: str, entry_point: str, statement: str) -> str:
    return json.dumps({"title": title, "entry_point": entry_point, "statement": statement})


def script(*, strategist: list[str]) -> dict:
    table: dict[tuple[str, str], str] = {}
    seed_solutions = [CORRECT_A, CORRECT_B, ALWAYS_FALSE, ALWAYS_TRUE]
    for i, code in enumerate(seed_solutions):
        table[("solver", f"evosyn;seed={SEED};solution={i};role=solver")] = fenced(code)
    for call, testing in enumerate(SEED_TESTINGS):
        key = f"evosyn;seed={SEED};tests={call};role=test_writer"
        table[("test_writer", key)] = tests_answer(testing)
    for number, answer in enumerate(strategist, 1):
        table[("strategist", f"evosyn;iteration={number};role=strategist")] = answer
    synthetic = [
        ("Sum of evens", "sum_evens", SUM_EVENS_STATEMENT, SUM_EVENS_SOLUTIONS, SUM_EVENS_TESTINGS),
        ("Blank text", "is_blank", IS_EMPTY_STATEMENT, IS_EMPTY_SOLUTIONS, IS_EMPTY_TESTINGS),
        ("Triple", "triple_it", DOUBLE_STATEMENT, [DOUBLE_SOLUTION] * 4, DOUBLE_TESTINGS),
    ]
    for slot, (title, entry, statement, solutions, testings) in enumerate(synthetic):
        table[("synthesizer", f"evosyn;synth={slot};role=synthesizer")] = problem_answer(
            title, entry, statement
        )
        for i, code in enumerate(solutions):
            table[("solver", f"evosyn;synth={slot};solution={i};role=solver")] = fenced(code)
        for call, testing in enumerate(testings):
            key = f"evosyn;synth={slot};tests={call};role=test_writer"
            table[("test_writer", key)] = tests_answer(testing)
    return table


SMALL_SETTINGS = {
    "solutions_per_problem": 4,
    "tests_per_problem": 4,
    "test_calls": 1,
    "max_iterations": 2,
    "num_islands": 2,
    "synth_problems": 3,
}


@pytest.fixture
def fake_server():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def world(db, fake_server):
    import_seeds(source="humaneval")
    seed_set = ProblemSet.objects.create(name="evosyn-seeds")
    seed_set.problems.add(Problem.objects.get(origin_dataset="humaneval", origin_id=SEED))
    endpoint = ModelEndpoint.objects.create(
        name="teacher",
        provider="openai",
        base_url=fake_server.base_url,
        model="teacher",
        concurrency_limit=4,
        timeout_s=30,
        max_retries=0,
    )
    return seed_set, endpoint


def respond(server: FakeOpenAI, table: dict) -> KeyedResponder:
    responder = KeyedResponder(table)
    server.responder = responder
    return responder
