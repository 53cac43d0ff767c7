"""Validation rules that hold on real model output: an oracle-only disagreement is overruled by
two agreeing programs, the brute force is written again after a statement repair, and the
parent's reference is run on the new tests (a setting can require it to fail)."""

from __future__ import annotations

import json

import pytest

from evolution.benchevolver.demo import answers, pack
from evolution.benchevolver.demo.stories import array_sum, sort_numbers
from evolution.benchevolver.engine.config import EvolutionSettings
from evolution.benchevolver.services import campaign_create
from evolution.models import LLMCall

from .helpers import KeyedResponder, build_world
from .test_scenarios import (
    SETTINGS,
    advance_until_done,
    put,
    running,
    sort_seed_evolves_with_family,
)

pytestmark = pytest.mark.django_db(transaction=True)

SEED = "demo/sort-numbers"
SORTED_ALL_BRUTE = """
n = int(input())
a = list(map(int, input().split()))
for i in range(len(a)):
    for j in range(len(a) - 1 - i):
        if a[j] > a[j + 1]:
            a[j], a[j + 1] = a[j + 1], a[j]
print(" ".join(map(str, a)))
"""
SORT_STATEMENT = """
# Sort the Numbers

Given n integers, print them in non-decreasing order, separated by spaces.

## Input
The first line holds n (1 ≤ n ≤ 5·10^4), the second n integers of absolute value at most 10^9.

## Output
The n integers in non-decreasing order.
"""

VALIDATOR = """
import sys
data = sys.stdin.read().split("\\n")
try:
    n = int(data[0])
    values = list(map(int, data[1].split()))
except (ValueError, IndexError):
    print("BAD format")
    sys.exit()
if not 1 <= n <= 200000:
    print("BAD n out of range")
elif len(values) != n:
    print("BAD wrong count")
elif any(abs(v) > 10**9 for v in values):
    print("BAD value out of range")
else:
    print("OK")
"""


def _run(fake_server, table, **settings):
    fake_server.responder = KeyedResponder(table)
    seed_set, evolver, panel = build_world(fake_server, seeds=(SEED,))
    campaign = running(
        campaign_create(
            name="rules",
            seed_set=seed_set,
            evolver=evolver,
            panel=panel,
            settings={**SETTINGS, **settings},
        )
    )
    lineage = advance_until_done(campaign.lineages.get())
    return campaign, lineage.candidates.get(round=1)


def test_an_oracle_only_disagreement_is_overruled_when_reference_and_brute_force_agree(
    fake_server,
):
    table = pack.responses()
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=1)
    put(table, SEED, "oracle", "round=1;repair=0", answers.oracle(["3 3 2 1 1", "7"]))
    campaign, cand = _run(fake_server, table)
    vote = next(e for e in cand.validation_ledger if e["step"] == "vote")
    assert vote["outcome"] == "agree" and vote["oracle_overruled"] == 1
    assert vote["examples"][0]["verdict"] == "oracle overruled (reference and brute force agree)"
    assert cand.repairs_used == 0 and cand.spec_repairs == 0
    assert cand.valid and cand.decision == "accepted"
    assert not LLMCall.objects.filter(campaign=campaign, role="repair").exists()


def test_the_brute_force_is_written_again_after_a_statement_repair(fake_server):
    table = pack.responses()
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=1)
    # First round of witnesses: all three differ on example 1 -> the statement is suspected.
    put(table, SEED, "brute_force", "round=1;repair=0", answers.code(SORTED_ALL_BRUTE))
    put(table, SEED, "oracle", "round=1;repair=0", answers.oracle(["1 2 3", "7"]))
    put(
        table,
        SEED,
        "repair",
        "round=1;repair=0",
        answers.repair(
            "statement",
            "Say that duplicates are printed once, largest first.",
            statement=sort_numbers.DISTINCT_DESC_STATEMENT,
        ),
    )
    # Written again from the repaired statement: the right brute force and oracle.
    put(
        table,
        SEED,
        "brute_force",
        "round=1;repair=1",
        answers.code(sort_numbers.DISTINCT_DESC_BRUTE),
    )
    put(table, SEED, "oracle", "round=1;repair=1", answers.oracle(["3 2 1", "7"]))
    put(
        table,
        SEED,
        "test_generator",
        "round=1;try=0;statement=1",
        answers.code(array_sum.ARRAY_GENERATOR),
    )
    put(table, SEED, "input_validator", "round=1;repair=1", answers.code(answers.ARRAY_VALIDATOR))
    campaign, cand = _run(fake_server, table)
    brute_calls = LLMCall.objects.filter(campaign=campaign, role="brute_force")
    assert brute_calls.count() == 2
    assert cand.generators["brute_force_regenerated"] == 1
    assert cand.generators["brute_force"].strip() == sort_numbers.DISTINCT_DESC_BRUTE.strip()
    votes = [e["outcome"] for e in cand.validation_ledger if e["step"] == "vote"]
    assert votes == ["disagree: repair statement", "agree"]
    assert cand.valid and cand.spec_repairs == 1


# The repaired statement adds a sentence the first one lacked: the prompts show which statement
# each program was written from.
REPAIRED_SENTENCE = "A value that occurs several times is printed once."
REPAIRED_STATEMENT = sort_numbers.DISTINCT_DESC_STATEMENT.replace(
    "separated by\nspaces.", "separated by\nspaces. " + REPAIRED_SENTENCE
)
FIRST_VALIDATOR = "# written from the first statement\n" + VALIDATOR
SECOND_VALIDATOR = "# written from the repaired statement\n" + VALIDATOR
SECOND_GENERATOR = array_sum.ARRAY_GENERATOR.replace(
    '"medium": rng.randint(50, 800)', '"medium": 60'
)


class PromptRecorder(KeyedResponder):
    """The keyed answers, keeping each request's prompt text by (role, key)."""

    def __init__(self, table):
        super().__init__(table)
        self.prompts: dict[tuple[str, str], str] = {}

    def __call__(self, body, headers):
        role = headers.get("x-benchforge-role", "")
        key = headers.get("x-benchforge-key", "")
        self.prompts[(role, key)] = "\n".join(m["content"] for m in body["messages"])
        return super().__call__(body, headers)


def test_a_statement_repair_writes_the_input_validator_and_the_test_generator_again(
    fake_server,
):
    table = pack.responses()
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=1)
    put(table, SEED, "input_validator", "round=1;repair=0", answers.code(FIRST_VALIDATOR))
    # The witnesses differ on example 1 -> the statement is suspected and repaired.
    put(table, SEED, "brute_force", "round=1;repair=0", answers.code(SORTED_ALL_BRUTE))
    put(table, SEED, "oracle", "round=1;repair=0", answers.oracle(["1 2 3", "7"]))
    put(
        table,
        SEED,
        "repair",
        "round=1;repair=0",
        answers.repair(
            "statement", "Say that values are printed once.", statement=REPAIRED_STATEMENT
        ),
    )
    # Written again from the repaired statement: witnesses, validator and generator.
    put(
        table,
        SEED,
        "brute_force",
        "round=1;repair=1",
        answers.code(sort_numbers.DISTINCT_DESC_BRUTE),
    )
    put(table, SEED, "oracle", "round=1;repair=1", answers.oracle(["3 2 1", "7"]))
    put(table, SEED, "input_validator", "round=1;repair=1", answers.code(SECOND_VALIDATOR))
    put(table, SEED, "test_generator", "round=1;try=0;statement=1", answers.code(SECOND_GENERATOR))
    recorder = PromptRecorder(table)
    fake_server.responder = recorder
    seed_set, evolver, panel = build_world(fake_server, seeds=(SEED,))
    campaign = running(
        campaign_create(
            name="rewrite",
            seed_set=seed_set,
            evolver=evolver,
            panel=panel,
            settings={**SETTINGS, "validate_inputs": True},
        )
    )
    cand = advance_until_done(campaign.lineages.get()).candidates.get(round=1)

    calls = LLMCall.objects.filter(campaign=campaign)
    assert calls.filter(role="input_validator").count() == 2
    assert calls.filter(role="test_generator").count() == 2
    assert calls.filter(status="ok").count() == calls.count()
    # Each was written from the statement of its time: the second ones from the repaired one.
    for role, first, second in (
        ("input_validator", "round=1;repair=0", "round=1;repair=1"),
        ("test_generator", "round=1;try=0", "round=1;try=0;statement=1"),
    ):
        prompt = recorder.prompts[(role, f"seed={SEED};{first};role={role}")]
        assert REPAIRED_SENTENCE not in prompt
        prompt = recorder.prompts[(role, f"seed={SEED};{second};role={role}")]
        assert REPAIRED_SENTENCE in prompt
    # The new validator checked the new generator's inputs, which are the candidate's tests.
    assert cand.generators["input_validator"].strip() == SECOND_VALIDATOR.strip()
    assert cand.generators["program"].strip() == SECOND_GENERATOR.strip()
    medium = [t for t in cand.tests if t["tier"] == "medium"]
    assert medium and all(t["input"].startswith("60\n") for t in medium)
    assert REPAIRED_SENTENCE in cand.statement
    # The ledger says what the repair sent back to be written again.
    steps = [e["step"] for e in cand.validation_ledger]
    rewritten = next(e for e in cand.validation_ledger if e["step"] == "statement revised")
    assert steps.index("statement revised") == steps.index("repair") + 1
    assert rewritten["rewritten"] == ["brute force", "oracle", "input validator", "test generator"]
    assert "input validator" in rewritten["outcome"] and "test generator" in rewritten["outcome"]
    assert [e["step"] for e in cand.validation_ledger].count("materialize") == 2
    assert cand.valid and cand.spec_repairs == 1 and cand.decision == "accepted"


def test_the_parent_reference_is_run_on_the_new_tests_and_recorded(fake_server):
    table = pack.responses()
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=1)
    _, cand = _run(fake_server, table)
    check = next(e for e in cand.validation_ledger if e["step"] == "parent check")
    # The seed's sort keeps duplicates and goes ascending: wrong on the evolved task from its
    # first tier on, which alone says only that the answer changed. Every tier is run (each
    # stops at its first failure), so the record says how far up the parent holds.
    assert check["outcome"].startswith("parent now wrong from the first tier on (WA on small")
    assert "the judge's call" in check["outcome"]
    assert [(t["tier"], t["verdict"]) for t in check["tiers"]] == [
        ("small", "WA"),
        ("medium", "WA"),
        ("large", "WA"),
        ("stress", "WA"),
    ]
    assert all(t["first_failing_test"] >= 1 for t in check["tiers"])
    assert cand.generators["parent_check"] == "WA"
    assert cand.decision == "accepted"
    # The judge saw the parent's reference, the mutator's claim, the check and each model's
    # failures, and its verdict on the lift is in the report.
    judge_prompt = _judge_prompt(fake_server)
    assert sort_numbers.SORT_REF.strip().splitlines()[0] in judge_prompt
    assert "Parent keeps duplicates." in judge_prompt
    assert "parent now wrong from the first tier on" in judge_prompt
    assert "solver-a: 1/4 pass; WA 3" in judge_prompt
    assert "solver-b: 1/4 pass; WA 3" in judge_prompt
    assert cand.judge_report["model"]["lift"] is True


def _judge_prompt(fake_server) -> str:
    bodies = [
        r.body
        for r in fake_server.requests
        if {k.lower(): v for k, v in r.headers.items()}.get("x-benchforge-role") == "judge"
    ]
    assert len(bodies) == 1
    return "\n".join(m["content"] for m in bodies[0]["messages"])


def test_a_judge_that_sees_no_algorithmic_lift_rejects_the_candidate(fake_server):
    """The paper's "each accepted mutation must make the parent algorithm insufficient": the
    judge rules on the lift, with the parent's and the candidate's references in front of it."""
    table = pack.responses()
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=1)
    put(
        table,
        SEED,
        "judge",
        "round=1",
        "```json\n"
        + json.dumps(
            {
                "artificial": False,
                "duplicate": False,
                "lift": False,
                "reasons": ["the parent's sort with a set in front solves it"],
                "verdict": "reject",
            }
        )
        + "\n```",
    )
    _, cand = _run(fake_server, table)
    assert cand.decision == "judge_rejected"
    assert cand.decision_reason == (
        "judge: no algorithmic lift over the parent — the parent's sort with a set in front "
        "solves it"
    )
    assert cand.judge_report["model"]["lift"] is False


def _parent_still_right(table: dict) -> None:
    """A 'mutation' that computes what the seed computes: the parent solves every new test."""
    put(
        table,
        SEED,
        "mutator",
        "round=1",
        answers.mutation("Sort with a heap.", "None really.", "heaps", sort_numbers.SORT_REF),
    )
    put(
        table,
        SEED,
        "writer",
        "round=1",
        answers.written("Sort the Numbers", SORT_STATEMENT, ["5\n3 1 3 2 1\n", "1\n7\n"]),
    )
    put(table, SEED, "test_generator", "round=1;try=0", answers.code(array_sum.ARRAY_GENERATOR))
    put(table, SEED, "brute_force", "round=1;repair=0", answers.code(SORTED_ALL_BRUTE))
    put(table, SEED, "oracle", "round=1;repair=0", answers.oracle(["1 1 2 3 3", "7"]))
    for model in pack.SOLVER_MODELS:
        for index in range(4):
            key = f"round=1;model={model};attempt={index}"
            put(table, SEED, "solver", key, answers.code(sort_numbers.DISTINCT_DESC))
    put(table, SEED, "judge", "round=1", answers.judge())


def test_a_parent_that_still_solves_the_new_tests_is_recorded(fake_server):
    table = pack.responses()
    _parent_still_right(table)
    _, cand = _run(fake_server, table)
    check = next(e for e in cand.validation_ledger if e["step"] == "parent check")
    assert check["outcome"] == "parent still solves every new test"
    assert check["passed"] == check["total"] > 0


def test_by_default_a_candidate_the_parent_still_solves_is_not_harder(fake_server):
    table = pack.responses()
    _parent_still_right(table)
    defaults = EvolutionSettings()
    assert defaults.require_parent_insufficient is True
    campaign, cand = _run(
        fake_server, table, require_parent_insufficient=defaults.require_parent_insufficient
    )
    assert cand.decision == "not_harder"
    assert "parent's reference still solves every new test" in cand.decision_reason
    # Decided before the panel was asked: no solver call for round 1.
    assert not LLMCall.objects.filter(campaign=campaign, role="solver", candidate=cand).exists()


# Tier "small" seed 1000 gets n = 0: the statement promises n >= 1.
BREAKS_CONSTRAINTS = array_sum.ARRAY_GENERATOR.replace(
    "print(n)\n",
    'if args.tier == "small" and args.seed == 1000:\n    n, values = 0, []\nprint(n)\n',
)
SEED_BLIND = """
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--tier", required=True)
parser.add_argument("--seed", type=int, required=True)
args = parser.parse_args()
print(5)
print("3 1 4 1 5")
"""


def _with_generators(table: dict, first: str) -> None:
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=1)
    put(table, SEED, "test_generator", "round=1;try=0", answers.code(first))
    put(table, SEED, "test_generator", "round=1;try=1", answers.code(array_sum.ARRAY_GENERATOR))
    put(table, SEED, "input_validator", "round=1;repair=0", answers.code(VALIDATOR))


def test_inputs_breaking_the_stated_constraints_are_dropped_and_the_generator_repaired(
    fake_server,
):
    table = pack.responses()
    _with_generators(table, BREAKS_CONSTRAINTS)
    campaign, cand = _run(fake_server, table, validate_inputs=True)
    entry = next(e for e in cand.validation_ledger if e["step"] == "input validation")
    assert (entry["dropped"], entry["generated"]) == (1, 13)  # 5 + 5 + 2 + 1 (demo tiers)
    assert entry["invalid"][0]["tier"] == "small" and entry["invalid"][0]["seed"] == 1000
    assert "BAD n out of range" in entry["invalid"][0]["why"]
    assert "regenerating the generator" in entry["outcome"]
    assert cand.test_repairs == 1
    assert LLMCall.objects.filter(campaign=campaign, role="test_generator").count() == 2
    assert LLMCall.objects.filter(campaign=campaign, role="input_validator").count() == 1
    # The repaired generator's inputs all pass; none of the final tests has n = 0.
    assert all(not t["input"].startswith("0\n") for t in cand.tests)
    assert cand.valid and cand.decision == "accepted"


def test_a_generator_that_ignores_its_seed_is_repaired(fake_server):
    table = pack.responses()
    _with_generators(table, SEED_BLIND)
    campaign, cand = _run(fake_server, table, validate_inputs=True)
    entry = next(e for e in cand.validation_ledger if e["step"] == "materialize")
    assert entry["outcome"] == "generator failed; regenerating"
    assert "ignores its seed: tier small gave 1 distinct input(s) for 5 seeds" in entry["reason"]
    assert cand.test_repairs == 1
    assert cand.valid and cand.decision == "accepted"


def test_a_validator_refusing_the_statements_own_examples_is_not_used(fake_server):
    table = pack.responses()
    _with_generators(table, BREAKS_CONSTRAINTS)
    put(table, SEED, "input_validator", "round=1;repair=0", answers.code('print("BAD always")'))
    _, cand = _run(fake_server, table, validate_inputs=True)
    entry = next(e for e in cand.validation_ledger if e["step"] == "input validator")
    assert entry["outcome"] == "refuses the statement's own example(s) [1, 2]: not used"
    assert not any(e["step"] == "input validation" for e in cand.validation_ledger)


def test_lineage_memory_keeps_each_model_s_errors_and_the_parent_check(fake_server):
    table = pack.responses()
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=1)
    campaign, cand = _run(fake_server, table)
    record = next(r for r in cand.lineage.memory if r.get("round") == 1)
    assert record["errors_by_model"] == {"solver-a": {"WA": 3}, "solver-b": {"WA": 3}}
    assert record["parent_check"].startswith("parent now wrong from the first tier on")
