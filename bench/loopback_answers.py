"""Authored model answers for the kinds' throughput rows of ``bench_kind_calls``: simulated
answers (not a model's), routed by the role and replay-key headers, that keep every stage of an
X-Coder campaign going to accepted problems. Served by the loopback model server::

    python -m tests.support.fake_openai --latency-ms 250 --responder bench.loopback_answers:XCoder

FrontierSmith's row uses the tests' authored script (``tests.frontiersmith.scripted:Script``);
EvoSyn's answers are its demo pack's (``evosyn.demo.pack``), reasoning's are made up from the
replay key. Nothing here imports Django: it runs inside the server process.
"""

from __future__ import annotations

import json
import random
import re
import zlib

from tests.support.fake_openai import Fault
from tests.support.words import WORDS

STATEMENT = """# {title}

The town of Brightwater is preparing festival number {index}. The organisers received offers
from several lantern makers; each offer is a whole number of coins that the maker will donate
if their lanterns are chosen. The committee may accept exactly k offers and wants the largest
total donation. Because makers may repeat an amount, equal offers count separately. You are
asked to compute the best total the committee can collect, so that the treasurer can plan the
festival budget before any contract is signed.

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

SOLUTION = """<think>Sort the offers and add the k largest.</think>
```python
import sys
data = sys.stdin.read().split()
n, k = int(data[0]), int(data[1])
values = sorted(map(int, data[2:2 + n]), reverse=True)
print(sum(values[:k]))
```"""

TESTS = [
    {"description": "one offer", "category": "boundary", "input_string": "1 1\n5\n"},
    {"description": "small", "category": "nominal", "input_string": "4 2\n1 2 3 4\n"},
    {"description": "ties", "category": "nominal", "input_string": "3 2\n5 5 5\n"},
    {"description": "medium", "category": "complex", "input_string": "6 4\n9 1 8 2 7 3\n"},
]


def _tagged(data: dict) -> str:
    return "Here are the features.\n<begin>" + json.dumps(data) + "<end>"


def _select(prompt: str) -> str:
    """Stage 1 as a model would answer it: keep the first two leaves of the tree it was shown."""
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
    roles: dict = {c: {} for c, _ in leaves}
    for category, leaf in leaves:
        roles[category][leaf] = {"potential_use": f"use of {leaf}"}
    selected: dict = {}
    for category, leaf in leaves[:2]:
        selected.setdefault(category, {})[leaf] = {"feature": leaf, "potential_use": "use"}
    return json.dumps(
        {
            "feature_roles_tree": roles,
            "selected_features_tree": selected,
            "integration_strategy": "Combine the selected features into one aggregation task.",
        }
    )


class XCoder:
    """Every X-Coder role, answered from its replay key (and stage 1 from its prompt)."""

    def __call__(self, body, headers):
        lowered = {k.lower(): v for k, v in headers.items()}
        role = lowered.get("x-benchforge-role", "")
        key = lowered.get("x-benchforge-key", "")
        if role == "xcoder_extract":
            n = re.search(r"seed=\D*(\d+)", key).group(1)
            return _tagged(
                {
                    "problem type": [f"quarry {n}"],
                    "algorithm": {f"orchard {n}": [f"willow {n}", f"aspen {n}"]},
                    "data structures": [f"cobble {n}"],
                }
            )
        if role == "xcoder_evolve":
            # One call per seed and round (evolution_scope "seed"), or per category ("tree").
            found = re.search(r"category=([^;]+)", key)
            if found:
                category = found.group(1)
                return _tagged({category: {f"meadow {category}": ["thistle", "bracken"]}})
            n = re.search(r"seed=\D*(\d+)", key).group(1)
            return _tagged({"algorithm": {f"orchard {n}": [f"willow {n}", f"meadow {n}"]}})
        if role == "xcoder_select":
            return _select(body["messages"][-1]["content"])
        if role == "xcoder_write":
            index = int(re.search(r"task=(\d+)", key).group(1))
            title = f"Lantern Festival Budget {index}"
            question = STATEMENT.format(title=title, index=index)
            return "```json\n" + json.dumps({"title": title, "question": question}) + "\n```"
        if role == "xcoder_tests":
            return json.dumps({"test_cases": [{"idx": i, **t} for i, t in enumerate(TESTS)]})
        if role == "xcoder_solver":
            return SOLUTION
        return Fault.http_status(404, '{"error": "no scripted answer"}')


class EvoSyn:
    """Every EvoSyn role from its replay key: the demo pack's seed solutions and testings, its
    Figure 3 strategy, and synthesized "sum of evens" problems (slot n's statement names n, so
    no two are the same text) with the pack's four solutions (two right, two wrong) and four
    testings, taken in turn."""

    def __call__(self, body, headers):
        from evosyn.demo import pack

        lowered = {k.lower(): v for k, v in headers.items()}
        role = lowered.get("x-benchforge-role", "")
        key = lowered.get("x-benchforge-key", "")
        number = re.search(r"(?:solution|tests)=(\d+)", key)
        n = int(number.group(1)) if number else 0
        synth = re.search(r"synth=(\d+)", key)
        if role == "strategist":
            return pack.fenced(pack.FIGURE_3)
        if role == "synthesizer" and synth:
            statement = pack.SUM_EVENS + f" (Festival ledger {synth.group(1)}.)"
            return json.dumps(
                {
                    "title": f"Sum of evens {synth.group(1)}",
                    "entry_point": "sum_evens",
                    "statement": statement,
                }
            )
        _, _, _, solutions, testings = pack.SYNTHESIZED[0]
        if not synth:
            solutions, testings = pack.SEED_SOLUTIONS, pack.SEED_TESTINGS
        if role == "solver":
            return pack.fenced(solutions[n % len(solutions)])
        if role == "test_writer":
            return "```json\n" + json.dumps(testings[n % len(testings)]) + "\n```"
        return Fault.http_status(404, '{"error": "no scripted answer"}')


class Reasoning:
    """Every reasoning role: a question of random words seeded by the cell's replay key (so any
    order of asking gets the same question), one answer, and a verdict per judge seat (seat 0
    says incorrect on every third question, so the scores are not all one)."""

    def __call__(self, body, headers):
        lowered = {k.lower(): v for k, v in headers.items()}
        role = lowered.get("x-benchforge-role", "")
        key = lowered.get("x-benchforge-key", "")
        if role == "generation":
            rng = random.Random(zlib.crc32(key.encode()))
            return "Consider the " + " ".join(rng.sample(WORDS, 14)) + " puzzle. What is it?"
        if role == "answering":
            return "Step by step... Final answer: 42"
        if role == "quality":
            return json.dumps({"verdict": "accept", "reason": "fine"})
        if role == "evaluation":
            cell = re.sub(r";judge=\d+", "", key)
            wrong = ";judge=0" in key and zlib.crc32(cell.encode()) % 3 == 0
            return json.dumps(
                {"score": "incorrect" if wrong else "correct", "rationale": "checked"}
            )
        return Fault.http_status(404, '{"error": "no scripted answer"}')
