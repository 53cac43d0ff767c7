"""Findings 6, 7 and 8 of issue #32 on a real LiveCodeBench record: AtCoder ABC309 A "Nine"
(stdin, public and packed private tests, ``benchmark_world``) evolved into "Nine on a Wide
Board": W given, up to 10^5 queries, so that its large tests are ordinary-size (about 1.2 MB).

- 6: by default the paper's rule decides on K = 4 attempts per model (7/8 is level 2 over a
  level-1 seed, accepted); with the Wilson option, level 5 is reachable within its own cap.
- 7: a statement repair writes the input validator and the test generator again, from the
  repaired statement.
- 8: megabyte inputs are hidden tests byte for byte; a generator writing more than the
  test-size limit is refused naming MAX_TEST_BYTES.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest
from django.test import override_settings

from evolution.benchevolver.demo import answers as demo_answers
from evolution.benchevolver.services import campaign_create
from evolution.models import LLMCall

from . import benchmark_world as bw
from . import lcb_world as w
from .test_scenarios import advance_until_done, running

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WIDE_STATEMENT = """
# Nine on a Wide Board

A board has rows of W squares. The integers 1, 2, 3, ... are written on it in row-major order:
row 1 holds 1 to W, row 2 holds W + 1 to 2W, and so on.

Answer Q queries. Each gives two integers A < B; print Yes if the squares with A and B written
on them are adjacent horizontally, and No otherwise.

## Input
The first line holds W and Q (1 ≤ W ≤ 10^9, 1 ≤ Q ≤ 10^5). Each of the next Q lines holds A
and B (1 ≤ A < B ≤ 10^9).

## Output
Q lines, each Yes or No.
"""
# The repaired statement adds the sentence the first one lacked (what the witnesses misread).
REPAIRED_SENTENCE = "Squares one above the other are not adjacent horizontally."
REPAIRED_STATEMENT = WIDE_STATEMENT.replace(
    "and No otherwise.", "and No otherwise. " + REPAIRED_SENTENCE
)
# Example 1 has a vertical pair (1 and 4 on a board of width 3).
EXAMPLES = ["3 3\n7 8\n1 4\n3 4\n", "5 2\n4 5\n5 6\n"]
EXAMPLE_OUTPUTS = ["Yes\nNo\nNo", "Yes\nNo"]

WIDE = """
import sys


def main():
    data = sys.stdin.buffer.read().split()
    width, queries = int(data[0]), int(data[1])
    out = []
    for i in range(queries):
        a, b = int(data[2 + 2 * i]), int(data[3 + 2 * i])
        same_row = (a - 1) // width == (b - 1) // width
        out.append("Yes" if b == a + 1 and same_row else "No")
    sys.stdout.write("\\n".join(out) + "\\n")


main()
"""
# Triangulation's witness: the same question asked another way (the column of A is not last).
WIDE_BRUTE = """
w, q = map(int, input().split())
for _ in range(q):
    a, b = map(int, input().split())
    print("Yes" if b - a == 1 and a % w != 0 else "No")
"""
# What a witness writes from the first statement, read as "adjacent" in any direction.
WIDE_BRUTE_ANY_DIRECTION = """
w, q = map(int, input().split())
for _ in range(q):
    a, b = map(int, input().split())
    print("Yes" if (b - a == 1 and a % w != 0) or b - a == w else "No")
"""
# A panel model that keeps the seed's board of width 3.
WIDE_WRONG = """
import sys
data = sys.stdin.read().split()
q = int(data[1])
for i in range(q):
    a, b = int(data[2 + 2 * i]), int(data[3 + 2 * i])
    print("Yes" if b == a + 1 and (a - 1) // 3 == (b - 1) // 3 else "No")
"""

WIDE_VALIDATOR = """
import sys


def bad(why):
    print("BAD " + why)
    sys.exit()


lines = sys.stdin.read().split("\\n")
if lines and lines[-1] == "":
    lines.pop()
try:
    w, q = map(int, lines[0].split())
    pairs = [tuple(map(int, line.split())) for line in lines[1:]]
except (ValueError, IndexError):
    bad("format")
if not (1 <= w <= 10**9 and 1 <= q <= 10**5):
    bad("W or Q out of range")
if len(pairs) != q:
    bad("wrong number of queries")
for pair in pairs:
    if len(pair) != 2 or not 1 <= pair[0] < pair[1] <= 10**9:
        bad("query out of range")
print("OK")
"""

# Large: 60,000 queries of nine- and ten-digit numbers, about 1.2 MB per input (above
# max_output_bytes, 10^6); stress: the statement's 10^5 queries.
WIDE_GENERATOR = (
    demo_answers.GENERATOR_HEAD
    + """
import sys

shape = {
    "small": (rng.randint(1, 6), rng.randint(1, 5), 40),
    "medium": (rng.randint(2, 1000), rng.randint(50, 300), 10**6),
    "large": (rng.randint(2, 10**9), 60000, 10**9),
    "stress": (rng.randint(2, 10**9), 100000, 10**9),
}
width, queries, top = shape[args.tier]
low = top // 10 if top > 100 else 1
lines = [f"{width} {queries}"]
for _ in range(queries):
    a = rng.randint(low, top - 1)
    b = a + 1 if rng.random() < 0.5 else rng.randint(a + 1, top)
    lines.append(f"{a} {b}")
sys.stdout.write("\\n".join(lines) + "\\n")
"""
)
SETTINGS = {
    "program_gen_large_inputs": 2,
    "program_gen_stress_inputs": 1,
    "max_iters_per_seed": 1,
}


class NineModel:
    """Scripted answers for the AtCoder seed: the panel ('good', 'shaky') solves the seed
    every time (8/8: level 1); the mutator evolves it to the wide board; in round 1 the panel
    answers from ``round_one`` (model -> programs by attempt, default right). ``answers``
    overrides any (role, key fragment) answer; every prompt is kept by (role, key)."""

    def __init__(self, round_one=None, answers=None):
        self.round_one = round_one or {}
        self.answers = answers or {}
        self.prompts: dict[tuple[str, str], str] = {}

    def __call__(self, body, headers):
        role = headers.get("x-benchforge-role", "")
        key = headers.get("x-benchforge-key", "")
        self.prompts[(role, key)] = "\n".join(m["content"] for m in body["messages"])
        for (answer_role, fragment), answer in self.answers.items():
            if answer_role == role and f";{fragment};" in f";{key};":
                return answer
        if role == "solver":
            if "round=0;" in key:
                return demo_answers.code(bw.NINE_OK)
            model = key.split("model=")[1].split(";")[0]
            attempt = int(key.split("attempt=")[1].split(";")[0])
            programs = self.round_one.get(model, [])
            return demo_answers.code(programs[attempt] if attempt < len(programs) else WIDE)
        return {
            "mutator": demo_answers.mutation(
                "Let the board be W squares wide and answer up to 10^5 queries.",
                "The seed hard-codes a board of width 3 and one pair.",
                "arithmetic on indices",
                WIDE,
            ),
            "writer": demo_answers.written("Nine on a Wide Board", WIDE_STATEMENT, EXAMPLES),
            "test_generator": demo_answers.code(WIDE_GENERATOR),
            "input_validator": demo_answers.code(WIDE_VALIDATOR),
            "brute_force": demo_answers.code(WIDE_BRUTE),
            "oracle": demo_answers.oracle(EXAMPLE_OUTPUTS),
            "judge": demo_answers.judge(),
        }.get(role, "no scripted answer")

    def prompt(self, role: str, fragment: str) -> str:
        (text,) = [t for (r, k), t in self.prompts.items() if r == role and fragment in k]
        return text


def _evolve(fake_server, model: NineModel, **settings):
    fake_server.responder = model
    seed_set = bw.import_world("atcoder", only=(bw.ATCODER_ID,))
    campaign = running(
        campaign_create(
            name="nine",
            seed_set=seed_set,
            evolver=w.endpoint(fake_server, "evolver"),
            panel=w.panel_of(
                "p", [w.endpoint(fake_server, "good"), w.endpoint(fake_server, "shaky")]
            ),
            settings={**SETTINGS, **settings},
        )
    )
    lineage = advance_until_done(campaign.lineages.get())
    assert (lineage.seed_passes, lineage.seed_attempts, lineage.seed_level) == (8, 8, 1)
    return campaign, lineage.candidates.get(round=1)


def _generated(tier: str, seed: int, program: str = WIDE_GENERATOR) -> str:
    args = [sys.executable, "-c", program, "--tier", tier, "--seed", str(seed)]
    return subprocess.run(args, capture_output=True, check=True, text=True).stdout


# --------------------------------------------------------------------------- finding 6


def test_by_default_one_failure_in_eight_is_level_two_as_in_algorithm_one(fake_server):
    """Alg. 1 line 22 with Table 5's K = 4 per model: 7/8 over a level-1 seed is level 2,
    accepted without more attempts and without an interval."""
    model = NineModel(round_one={"shaky": [WIDE, WIDE, WIDE, WIDE_WRONG]})
    _, cand = _evolve(fake_server, model)
    assert (cand.passes, cand.attempts, cand.level, cand.decision) == (7, 8, 2, "accepted")
    assert not [e for e in cand.validation_ledger if e["step"] == "difficulty evidence"]
    assert "Wilson" not in cand.judge_report["acceptance"]


def test_with_the_wilson_option_level_five_is_reached_within_its_own_cap(fake_server):
    """Every round-1 answer keeps the width of 3: 0/8 and 0/16 prove only level 4 at 95%; the
    panel is asked again until level 5's own cap (35 pooled attempts) proves it."""
    model = NineModel(round_one={m: [WIDE_WRONG] * 20 for m in ("good", "shaky")})
    _, cand = _evolve(
        fake_server, model, level_confidence=0.95, accept_min_level_gain=4, max_panel_attempts=0
    )
    steps = [e for e in cand.validation_ledger if e["step"] == "difficulty evidence"]
    assert [e["outcome"] for e in steps] == ["more", "more", "more", "more", "enough"]
    assert "0/8 pass" in steps[0]["evidence"] and "supports level 4" in steps[0]["evidence"]
    assert (cand.passes, cand.attempts, cand.level, cand.decision) == (0, 36, 5, "accepted")
    assert (
        "0/36 pass, 95% Wilson interval [0.00, 0.10] supports level 5"
        in (cand.judge_report["acceptance"])
    )


# --------------------------------------------------------------------------- finding 7


def test_a_statement_repair_writes_the_validator_and_the_generator_again(fake_server):
    """The witnesses misread "adjacent" (the brute force as any direction, the oracle more
    loosely still): reference, brute force and oracle all differ on example 1, so the
    statement is suspected and repaired, and the witnesses, the input validator and the test
    generator are all written again from the repaired statement."""
    second_generator = WIDE_GENERATOR.replace("rng.randint(50, 300), 10**6)", "60, 10**6)")
    model = NineModel(
        round_one={"shaky": [WIDE, WIDE, WIDE, WIDE_WRONG]},
        answers={
            ("brute_force", "repair=0"): demo_answers.code(WIDE_BRUTE_ANY_DIRECTION),
            ("oracle", "repair=0"): demo_answers.oracle(["Yes\nYes\nYes", "Yes\nNo"]),
            ("repair", "repair=0"): demo_answers.repair(
                "statement",
                "Say that vertical neighbours do not count.",
                statement=REPAIRED_STATEMENT,
            ),
            ("test_generator", "statement=1"): demo_answers.code(second_generator),
            ("input_validator", "repair=1"): demo_answers.code(
                "# from the repaired statement\n" + WIDE_VALIDATOR
            ),
        },
    )
    campaign, cand = _evolve(fake_server, model)

    calls = LLMCall.objects.filter(campaign=campaign)
    assert calls.filter(role="input_validator").count() == 2
    assert calls.filter(role="test_generator").count() == 2
    for role, first, second in (
        ("input_validator", "round=1;repair=0", "round=1;repair=1"),
        ("test_generator", "round=1;try=0;role", "round=1;try=0;statement=1"),
        ("brute_force", "round=1;repair=0", "round=1;repair=1"),
    ):
        assert REPAIRED_SENTENCE not in model.prompt(role, first)
        assert REPAIRED_SENTENCE in model.prompt(role, second)
    assert cand.generators["input_validator"].startswith("# from the repaired statement")
    assert cand.generators["program"].strip() == second_generator.strip()
    medium = [t for t in cand.tests if t["tier"] == "medium"]
    assert medium and all(t["input"].split("\n")[0].endswith(" 60") for t in medium)
    rewritten = next(e for e in cand.validation_ledger if e["step"] == "statement revised")
    assert rewritten["rewritten"] == ["brute force", "oracle", "input validator", "test generator"]
    votes = [e["outcome"] for e in cand.validation_ledger if e["step"] == "vote"]
    assert votes == ["disagree: repair statement", "agree"]
    assert REPAIRED_SENTENCE in cand.statement
    assert cand.valid and cand.spec_repairs == 1 and cand.decision == "accepted"


# --------------------------------------------------------------------------- finding 8


def test_megabyte_inputs_of_an_evolved_atcoder_problem_are_kept_byte_for_byte(fake_server):
    model = NineModel(round_one={"shaky": [WIDE, WIDE, WIDE, WIDE_WRONG]})
    _, cand = _evolve(fake_server, model)
    assert cand.test_repairs == 0
    assert Counter(t["tier"] for t in cand.tests) == {
        "public": 2,
        "small": 5,
        "medium": 5,
        "large": 2,
        "stress": 1,
    }
    for test in [t for t in cand.tests if t["tier"] in ("large", "stress")]:
        expected = _generated(test["tier"], test["provenance"]["seed"])
        assert len(expected.encode()) > 1_100_000  # more than max_output_bytes (10^6)
        assert test["input"] == expected
    steps = {e["step"]: e for e in cand.validation_ledger}
    assert steps["materialize"]["outcome"] == "ok"
    assert "input validation" not in steps  # the validator passed every input
    assert steps["hidden check"]["outcome"] == "agree"
    assert cand.valid and cand.decision == "accepted"
    stored = cand.accepted_problem.tests.filter(tier="stress").get()
    assert stored.input == next(t["input"] for t in cand.tests if t["tier"] == "stress")


@override_settings(MAX_TEST_BYTES=1_000_000)
def test_a_generator_above_the_test_size_limit_is_refused_naming_it(fake_server):
    model = NineModel()
    campaign, cand = _evolve(fake_server, model)
    reason = "test generator wrote more than MAX_TEST_BYTES (1000000 bytes) on tier large seed 1000"
    assert (cand.decision, cand.decision_reason) == ("invalid", reason)
    entries = [e for e in cand.validation_ledger if e["step"] == "materialize"]
    assert [e["outcome"] for e in entries][-1] == "invalid"
    # The examples and the small and medium tiers' inputs before it are counted.
    assert all((e["public"], e["generated"]) == (2, 10) for e in entries)
    assert LLMCall.objects.filter(campaign=campaign, role="test_generator").count() == 3
    key = "round=1;try=1;role=test_generator"
    assert f"The previous generator failed: {reason}." in model.prompt("test_generator", key)
