"""An X-Coder world over the loopback model server: two seed problems with reference solutions,
a generator endpoint and two solver endpoints, and scripted answers for every stage.

Answers are keyed by (role, replay key) as in the engine's tests. Stage 1 is the one answer
that depends on the request: the subtree is sampled by the engine, so the scripted "model"
selects the first two leaves of the tree it was shown (as a model would: from its prompt).
"""

from __future__ import annotations

import json
import re

import pytest

from evolution.models import ModelEndpoint, Problem, ProblemSet
from tests.evolution.benchevolver.helpers import KeyedResponder
from tests.support.fake_openai import FakeOpenAI
from xcoder.demo.pack import CF_WRONG, LANTERN

SEED_SUM = "seed/sum-pairs"
SEED_MAX = "seed/max-window"

EXTRACTIONS = {
    SEED_SUM: {
        "programming language": ["Python"],
        "problem type": ["array aggregation"],
        "algorithm": {"selection methods": ["partial ordering"]},
        "data structures": ["binary heap"],
        "summary": "Adds the two largest values.",
    },
    SEED_MAX: {
        "programming language": ["Python"],
        "problem type": ["array aggregation", "window queries"],
        "algorithm": {"scanning": ["running maximum"]},
        "data structures": ["double-ended queue"],
    },
}
EVOLUTIONS = {
    # depth: "partial ordering" (a leaf) gains sub-features; breadth: a new sibling family.
    "algorithm": {
        "selection methods": {
            "partial ordering": ["quickselect partitioning", "tournament selection"],
        },
        "scanning": ["running maximum", "running minimum"],
        "counting methods": ["frequency buckets", "radix bucketing"],
    },
    "data structures": ["binary heap", "double-ended queue", "pairing heap", "skew heap"],
    "problem type": {"array aggregation": [], "window queries": [], "order statistics": []},
}

# The demo pack's Lantern statement, one sentence longer.
STATEMENT = LANTERN.replace(
    "separately. Compute\nthe best total the committee can collect, so that the treasurer can "
    "plan the festival budget\nbefore any contract is signed.",
    "separately. You are\nasked to compute the best total the committee can collect, so that "
    "the treasurer can plan the\nfestival budget before any contract is signed.",
)
assert STATEMENT != LANTERN

# The settings the scripted answers below were written for: two candidates per solver endpoint,
# prompted tests, the merged tree evolved category by category. Tests of the document's
# defaults (n = 8, tool-based tests, evolve-then-merge) script their own answers.
SCRIPTED_SETTINGS = {"candidates_per_endpoint": 2, "test_mode": "prompt", "evolution_scope": "tree"}


def reasoned(answer: str, thought: str = "The k largest offers give the best total.") -> str:
    """A reasoning model's answer: a complete think block, then the answer (C.1 (i))."""
    return f"<think>\n{thought}\n</think>\n{answer}"


CORRECT = """```python
import sys
data = sys.stdin.read().split()
n, k = int(data[0]), int(data[1])
values = sorted(map(int, data[2:2 + n]), reverse=True)
print(sum(values[:k]))
```"""
CORRECT_B = """Reasoning done.

```python
import heapq, sys
n, k, *a = map(int, sys.stdin.read().split())
print(sum(heapq.nlargest(k, a[:n])))
```"""
# Wrong whenever more than 3 offers are accepted: the heavy tests expose it.
WRONG_LARGE = CF_WRONG
TWO_BLOCKS = "```python\nprint(1)\n```\nor\n```python\nprint(2)\n```"
CORRECT, CORRECT_B, WRONG_LARGE, TWO_BLOCKS = (
    reasoned(a) for a in (CORRECT, CORRECT_B, WRONG_LARGE, TWO_BLOCKS)
)

TEST_CASES = [
    {"idx": 0, "description": "one offer", "category": "boundary", "input_string": "1 1\n5\n"},
    {"idx": 1, "description": "small", "category": "nominal", "input_string": "4 2\n1 2 3 4\n"},
    {"idx": 2, "description": "ties", "category": "nominal", "input_string": "3 2\n5 5 5\n"},
    {
        "idx": 3,
        "description": "medium",
        "category": "complex",
        "input_string": "6 4\n9 1 8 2 7 3\n",
    },
    {
        "idx": 4,
        "description": "all accepted",
        "category": "stress",
        "input_string": "8 8\n1 2 3 4 5 6 7 8\n",
    },
    {
        "idx": 5,
        "description": "large values",
        "category": "stress",
        "input_string": "5 5\n1000000000 999999999 7 0 3\n",
    },
]

GENERATOR = """```python
import argparse
import json
import random

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=42, help="Random seed for reproducibility")
args = parser.parse_args()
random.seed(args.seed)
cases = []
# Random mid-sized offers with k close to n: stresses the choice of many offers.
for size in (6, 9):
    values = [random.randint(0, 10**9) for _ in range(size)]
    cases.append({"category": "stress", "description": f"n={size}",
                  "input_string": f"{size} {size - 1}\\n{' '.join(map(str, values))}\\n"})
print(json.dumps({"test_cases": cases}))
```"""


def tagged(data: dict) -> str:
    return "Here are the features.\n<begin>" + json.dumps(data) + "<end>"


def select_answer(body: dict, *, take: int = 2) -> str:
    """Stage 1 as a model would answer it: annotate the sampled leaves, keep the first ``take``."""
    prompt = body["messages"][-1]["content"]
    section = prompt.split("**Available Features (Tree):**", 1)[1].split("\n---\n", 1)[0]
    tree = json.loads(section)
    leaves: list[tuple[str, str]] = []

    def walk(category: str, node) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if value:
                    walk(category, value)
                else:
                    leaves.append((category, key))
        elif isinstance(node, list):
            leaves.extend((category, item) for item in node)

    for category, node in tree.items():
        walk(category, node)
    roles = {c: {} for c, _ in leaves}
    for category, leaf in leaves:
        roles[category][leaf] = {"potential_use": f"use of {leaf}"}
    selected: dict = {}
    for category, leaf in leaves[:take]:
        selected.setdefault(category, {})[leaf] = {
            "feature": leaf,
            "potential_use": f"use of {leaf}",
        }
    return json.dumps(
        {
            "feature_roles_tree": roles,
            "selected_features_tree": selected,
            "integration_strategy": "Combine the selected features into one aggregation task.",
        }
    )


def task_answer(statement: str = STATEMENT, title: str = "Lantern Festival Budget") -> str:
    return "```json\n" + json.dumps({"title": title, "question": statement}) + "\n```"


def base_table(*, tasks: int = 1) -> dict:
    table: dict = {}
    for seed, features in EXTRACTIONS.items():
        table[("xcoder_extract", f"xcoder;extract;seed={seed};role=xcoder_extract")] = tagged(
            features
        )
    for category, tree in EVOLUTIONS.items():
        table[
            ("xcoder_evolve", f"xcoder;evolve;round=1;category={category};role=xcoder_evolve")
        ] = tagged({category: tree})
    for index in range(tasks):
        table[("xcoder_write", f"xcoder;task={index};write;style=codeforces;role=xcoder_write")] = (
            task_answer()
        )
        table[("xcoder_tests", f"xcoder;task={index};tests;role=xcoder_tests")] = json.dumps(
            {"test_cases": TEST_CASES}
        )
        table[("xcoder_generator", f"xcoder;task={index};generator;role=xcoder_generator")] = (
            GENERATOR
        )
        answers = {
            ("solver-a", 0): CORRECT,
            ("solver-a", 1): CORRECT_B,
            ("solver-b", 0): WRONG_LARGE,
            ("solver-b", 1): TWO_BLOCKS,
        }
        for (name, sample), content in answers.items():
            key = f"xcoder;task={index};solve;endpoint={name};sample={sample};role=xcoder_solver"
            table[("xcoder_solver", key)] = content
    return table


class Responder(KeyedResponder):
    """The keyed table, plus stage 1 answered from the request."""

    def __call__(self, body, headers):
        role = headers.get("X-BenchForge-Role", headers.get("x-benchforge-role", ""))
        key = headers.get("X-BenchForge-Key", headers.get("x-benchforge-key", ""))
        if role == "xcoder_select" and (role, key) not in self.table:
            self.seen.append((role, key))
            return select_answer(body)
        return super().__call__(body, headers)


def seed_set() -> ProblemSet:
    existing = ProblemSet.objects.filter(name="xcoder-seeds").first()
    if existing is not None:
        return existing
    problems = [
        Problem.objects.create(
            title="Sum of two largest",
            statement="Given n integers, print the sum of the two largest.",
            reference_solution="import sys\n"
            "a=sorted(map(int,sys.stdin.read().split()[1:]))\nprint(a[-1]+a[-2])\n",
            harness="stdio",
            origin_dataset="seed",
            origin_id=SEED_SUM,
        ),
        Problem.objects.create(
            title="Window maximum",
            statement="Given n integers and w, print the maximum of every window of width w.",
            reference_solution="print(0)\n",
            harness="stdio",
            origin_dataset="seed",
            origin_id=SEED_MAX,
        ),
    ]
    seeds = ProblemSet.objects.create(name="xcoder-seeds")
    seeds.problems.set(problems)
    return seeds


def endpoint(server: FakeOpenAI, name: str) -> ModelEndpoint:
    return ModelEndpoint.objects.update_or_create(
        name=name,
        defaults=dict(
            provider="openai",
            base_url=server.base_url,
            model=name,
            concurrency_limit=4,
            timeout_s=30,
            max_retries=1,
        ),
    )[0]


@pytest.fixture
def fake_server():
    with FakeOpenAI() as server:
        yield server


def statement_without(section: str) -> str:
    """The scripted statement with one example's explanation removed (for gate tests)."""
    return re.sub(r"Explanation\nAll three[^\n]*\n", "", STATEMENT) if section else STATEMENT
