"""Output contracts: the writer declares how answers are checked, and the same rule judges the
validation votes, the panel and (through the accepted problem) the leaderboard."""

from __future__ import annotations

import json

import pytest

from evolution.benchevolver.demo import answers, pack
from evolution.benchevolver.demo.stories import array_sum, sort_numbers
from evolution.benchevolver.services import campaign_create
from evolution.models import Problem
from evolution.sandbox.compare import compare_stdio

from .helpers import KeyedResponder, build_world
from .test_scenarios import SETTINGS, advance_until_done, put, running

pytestmark = pytest.mark.django_db(transaction=True)

SEED = "demo/sort-numbers"

MEAN_DISTINCT = """
n = int(input())
d = set(map(int, input().split()))
print(sum(d) / len(d))
"""
MEAN_DISTINCT_BRUTE = """
n = int(input())
seen = {}
for v in input().split():
    seen[int(v)] = True
total = 0
for v in seen:
    total += v
print("%.12f" % (total / len(seen)))
"""
# Right, but printed with 7 decimals: wrong under exact comparison, right within 1e-6 relative.
MEAN_DISTINCT_ROUNDED = """
n = int(input())
d = set(map(int, input().split()))
print("%.7f" % (sum(d) / len(d)))
"""
MEAN_ALL = """
n = int(input())
a = list(map(int, input().split()))
print(sum(a) / len(a))
"""
STATEMENT = """
# Mean of Distinct Values

Given n integers, print the arithmetic mean of the distinct values among them. Answers within a
relative or absolute error of 1e-6 are accepted.

## Input
The first line holds n (1 ≤ n ≤ 5·10^4), the second n integers of absolute value at most 10^9.

## Output
One real number.
"""


def _written(contract) -> str:
    data = {
        "title": "Mean of Distinct Values",
        "statement": STATEMENT.strip(),
        "examples": ["5\n3 1 3 2 1\n", "1\n7\n"],
        "output_contract": contract,
    }
    return f"```json\n{json.dumps(data)}\n```\n"


def _table(contract) -> dict:
    table = pack.responses()
    put(
        table,
        SEED,
        "mutator",
        "round=1",
        answers.mutation(
            "Average the distinct values.", "Sorting is not the point.", "hashing", MEAN_DISTINCT
        ),
    )
    put(table, SEED, "writer", "round=1", _written(contract))
    put(table, SEED, "test_generator", "round=1;try=0", answers.code(array_sum.ARRAY_GENERATOR))
    put(table, SEED, "brute_force", "round=1;repair=0", answers.code(MEAN_DISTINCT_BRUTE))
    put(table, SEED, "oracle", "round=1;repair=0", answers.oracle(["2", "7"]))
    right, wrong = pack.SOLVER_MODELS
    for index in range(4):
        key = f"round=1;model={right};attempt={index}"
        put(table, SEED, "solver", key, answers.code(MEAN_DISTINCT_ROUNDED))
        key = f"round=1;model={wrong};attempt={index}"
        put(table, SEED, "solver", key, answers.code(MEAN_ALL))
    put(table, SEED, "judge", "round=1", answers.judge())
    return table


def _run(fake_server, table):
    fake_server.responder = KeyedResponder(table)
    seed_set, evolver, panel = build_world(fake_server, seeds=(SEED,))
    campaign = running(
        campaign_create(
            name="contracts",
            seed_set=seed_set,
            evolver=evolver,
            panel=panel,
            settings={**SETTINGS, "max_iters_per_seed": 1},
        )
    )
    lineage = advance_until_done(campaign.lineages.get())
    return lineage.candidates.get(round=1)


def test_a_float_output_task_is_judged_with_its_tolerance_everywhere(fake_server):
    cand = _run(fake_server, _table({"kind": "float", "tolerance": 1e-6}))
    assert cand.generators["contract"] == {"kind": "float", "tolerance": 1e-6}
    # The brute force prints 12 decimals, the reference Python's repr: they agree within 1e-6.
    vote = next(e for e in cand.validation_ledger if e["step"] == "vote")
    assert vote["outcome"] == "agree"
    # The rounded answers really differ from the reference's text on some hidden test ...
    rounded_differs = any(
        not compare_stdio(f"{float(t['output']):.7f}", t["output"])[0]
        for t in cand.tests
        if t["hidden"]
    )
    assert rounded_differs
    # ... yet the panel judges them right: 4 of 8 pass (the mean of all values fails).
    assert (cand.passes, cand.attempts) == (4, 8)
    assert cand.panel_results[pack.SOLVER_MODELS[0]]["passes"] == 4
    assert cand.decision == "accepted"
    # The accepted problem carries the contract, so the leaderboard judges with it too.
    problem = Problem.objects.get(kind="evolved")
    assert problem.comparison == {"mode": "float", "rel_tol": 1e-6, "abs_tol": 1e-6}


def test_a_checker_that_rejects_the_references_own_output_makes_the_task_invalid(fake_server):
    always_wrong = 'import sys\nsys.stdin.read()\nprint("WA no")\n'
    cand = _run(fake_server, _table({"kind": "checker", "checker": always_wrong}))
    assert cand.decision == "invalid"
    assert "checker rejects the reference's own output" in cand.decision_reason
    entry = next(e for e in cand.validation_ledger if e["step"] == "output contract")
    assert entry["outcome"] == "rejected"


def test_a_tokens_contract_accepts_answers_laid_out_on_other_lines(fake_server):
    table = _table("tokens")
    # The sort seed's own shape: distinct values, largest first; one model prints one a line.
    one_per_line = (
        "n = int(input())\n"
        "for v in sorted(set(map(int, input().split())), reverse=True):\n"
        "    print(v)\n"
    )
    put(
        table,
        SEED,
        "mutator",
        "round=1",
        answers.mutation("Dedupe.", "Duplicates.", "hashing", sort_numbers.DISTINCT_DESC),
    )
    put(
        table,
        SEED,
        "brute_force",
        "round=1;repair=0",
        answers.code(sort_numbers.DISTINCT_DESC_BRUTE),
    )
    put(table, SEED, "oracle", "round=1;repair=0", answers.oracle(["3 2 1", "7"]))
    right, wrong = pack.SOLVER_MODELS
    for index in range(4):
        put(
            table,
            SEED,
            "solver",
            f"round=1;model={right};attempt={index}",
            answers.code(one_per_line),
        )
        put(
            table,
            SEED,
            "solver",
            f"round=1;model={wrong};attempt={index}",
            answers.code(sort_numbers.SORT_REF),
        )
    cand = _run(fake_server, table)
    assert cand.generators["contract"] == {"kind": "tokens"}
    assert cand.panel_results[right]["passes"] == 4
    assert cand.panel_results[wrong]["passes"] == 0
