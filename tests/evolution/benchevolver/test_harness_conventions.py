"""The harness E is fixed along a lineage (Algorithm 1 keeps E_i), and every code-writing prompt
states the one calling convention that harness uses.

One campaign over an AtCoder stdin seed, a LeetCode call-based seed (``class Solution``
starter), HumanEval/0 and SciCode 901.1 (assertion programs), against a model that does exactly
what each prompt says: it reads the calling convention off the prompt's instructions (the
statement and the code blocks left out) and writes its code that way. Each solver, mutator,
writer, brute-force and faithfulness prompt must state exactly one convention, the harness's;
code written that way passes the harness (``evolution.sandbox.judge``); each evolved child keeps
its parent's harness, entry point and starter convention, two generations deep.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from evolution import sandbox
from evolution.benchevolver.demo import answers as demo_answers
from evolution.benchevolver.demo.stories import humaneval_0
from evolution.benchevolver.services import campaign_create
from evolution.models import Campaign
from evolution.sandbox import contracts
from tests.support.conventions import conventions_in, written_as
from tests.support.fake_openai import FakeOpenAI

from . import benchmark_world as bw
from . import lcb_world as w
from .helpers import truncate_engine_tables
from .test_scenarios import advance_until_done, running

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

# --------------------------------------------------------------------------- the four seeds

NINE_EVOLVED = """
n, a, b = map(int, input().split())
ra, ca = divmod(a - 1, n)
rb, cb = divmod(b - 1, n)
print("Yes" if abs(ra - rb) + abs(ca - cb) == 1 else "No")
"""
NINE_STATEMENT = """
# Neighbours on a Big Board

An N x N board has the integers 1 to N^2 written on it row by row, from the top-left square.
Given A < B, say whether the squares with A and B share a side.

## Input
One line: N A B (2 <= N <= 10^9, 1 <= A < B <= N^2).

## Output
Yes if the two squares share a side, No otherwise.
"""
NINE_GENERATOR = (
    demo_answers.GENERATOR_HEAD
    + """
n = {"small": rng.randint(2, 4), "medium": rng.randint(5, 1000), "large": rng.randint(10**4, 10**9), "stress": 10**9}[args.tier]
cells = n * n
a = rng.randint(1, cells - 1)
b = min(cells, rng.choice([a + 1, a + n, rng.randint(a + 1, cells)]))
print(n, a, b)
"""
)

COUNT_PAIRS_SEED = """
def _solve(nums, target):
    n = len(nums)
    return sum(1 for i in range(n) for j in range(i + 1, n) if nums[i] + nums[j] < target)
"""
COUNT_PAIRS_EVOLVED = """
def _solve(nums, target):
    values = sorted(nums)
    i, j, count = 0, len(values) - 1, 0
    while i < j:
        if values[i] + values[j] < target:
            count += j - i
            i += 1
        else:
            j -= 1
    return count
"""
COUNT_PAIRS_STATEMENT = """
# Count Pairs Below Target, at Scale

Given an integer array `nums` and an integer `target`, return the number of index pairs
(i, j) with 0 <= i < j < n and nums[i] + nums[j] < target.

## Input
`countPairs(nums, target)`: 1 <= n <= 10^5; -10^9 <= nums[i], target <= 10^9.

## Output
The number of such pairs.
"""
COUNT_PAIRS_GENERATOR = (
    demo_answers.GENERATOR_HEAD
    + """
import json

n = {"small": rng.randint(1, 8), "medium": rng.randint(50, 300), "large": 3000, "stress": 20000}[args.tier]
bound = 50 if args.tier == "small" else 10**9
print(json.dumps([rng.randint(-bound, bound) for _ in range(n)]))
print(json.dumps(rng.randint(-bound, bound)))
"""
)

CLOSE_SEED = """
def _solve(numbers, threshold):
    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1 :])
"""
CLOSE_EVOLVED = """
from bisect import bisect_right


def _solve(numbers, threshold):
    values = sorted(numbers)
    return sum(j - bisect_right(values, v - threshold, 0, j) for j, v in enumerate(values))
"""
CLOSE_STATEMENT = """
# Close Pairs

Write `has_close_elements(numbers: list[float], threshold: float) -> int` returning the number of
pairs of positions i < j with |numbers[i] - numbers[j]| < threshold (strictly less).

## Input
1 <= len(numbers) <= 2*10^4 multiples of 0.25 between 0 and 500; threshold > 0.

## Output
The number of such pairs.
"""

RADIANS_SEED = """
import math


def _solve(deg):
    return deg * math.pi / 180.0
"""
RADIANS_EVOLVED = """
import math


def _solve(deg):
    return (deg % 360.0) * math.pi / 180.0
"""
RADIANS_STATEMENT = """
# Normalized radians

Write `to_radians(deg)`: the angle `deg` (degrees, any real number) as radians in [0, 2*pi),
computed as (deg mod 360) * pi / 180 with Python's float modulo.

## Input
-720 <= deg <= 720.

## Output
The angle in radians.
"""
RADIANS_GENERATOR = (
    demo_answers.GENERATOR_HEAD
    + """
import json

bound = {"small": 10, "medium": 360, "large": 720}[args.tier]
print(json.dumps(round(rng.uniform(-bound, bound), 3)))
"""
)


@dataclass
class Script:
    harness: str
    # The convention the harness runs code by: ("program", "") or (kind, entry point).
    convention: tuple[str, str]
    seed_core: str
    evolved_core: str
    statement: str
    examples: list[str]
    generator: str
    family: str
    oracle: list[str] = field(default_factory=list)


SCRIPTS = {
    bw.ATCODER_ID: Script(
        "stdio",
        ("program", ""),
        bw.NINE_OK,
        NINE_EVOLVED,
        NINE_STATEMENT,
        ["3 7 8\n", "4 2 6\n", "3 3 4\n"],
        NINE_GENERATOR,
        "math",
        ["Yes", "Yes", "No"],
    ),
    bw.LEETCODE_ID: Script(
        "function",
        ("method", "countPairs"),
        COUNT_PAIRS_SEED,
        COUNT_PAIRS_EVOLVED,
        COUNT_PAIRS_STATEMENT,
        ["[-1, 1, 2, 3, 1]\n2\n", "[5, -5, 0, 10]\n1\n"],
        COUNT_PAIRS_GENERATOR,
        "two pointers",
        ["3", "2"],
    ),
    bw.HUMANEVAL_ID: Script(
        "assert",
        ("function", "has_close_elements"),
        CLOSE_SEED,
        CLOSE_EVOLVED,
        CLOSE_STATEMENT,
        ["[1.0, 2.0, 3.0]\n1.5\n", "[1.0, 2.75, 3.0, 4.0, 5.0, 2.0]\n0.5\n"],
        humaneval_0.CLOSE_PAIRS_GENERATOR,
        "binary search",
    ),
    bw.SCICODE_ID: Script(
        "assert",
        ("function", "to_radians"),
        RADIANS_SEED,
        RADIANS_EVOLVED,
        RADIANS_STATEMENT,
        ["180.0\n", "-90.0\n"],
        RADIANS_GENERATOR,
        "geometry",
    ),
}
CHECKED_ROLES = ("solver", "faithfulness", "brute_force", "mutator", "writer", "repair")


class ObedientModel:
    """Answers every role for the four seeds, writing code exactly as the prompt says.

    The panel solves each seed; on an evolved task the first attempt of model ``alpha`` is
    right and the others keep the parent's approach (pass rate 1/4: level 4, accepted), so the
    lineage evolves a second generation from its accepted child."""

    def __init__(self):
        self.checked: list[tuple[str, str, str, set]] = []
        self.prompts: dict[tuple[str, str], str] = {}

    def __call__(self, body, headers):
        role = headers.get("x-benchforge-role", "")
        key = headers.get("x-benchforge-key", "")
        prompt = body["messages"][0]["content"]
        self.prompts[(role, key)] = prompt
        seed_id = key.split(";")[0].removeprefix("seed=")
        script = SCRIPTS[seed_id]
        if role in CHECKED_ROLES:
            found = conventions_in(prompt, [script.statement, SEED_STATEMENTS[seed_id]])
            self.checked.append((seed_id, role, key, found))
            if len(found) != 1:
                return "The prompt states no single calling convention: no code."
            (convention,) = found
        if role == "solver":
            right = "round=0;" in key or "model=alpha;attempt=0" in key
            core = script.seed_core if "round=0;" in key else script.evolved_core
            if not right:
                core = script.seed_core
            return demo_answers.code(written_as(convention, core))
        if role in ("faithfulness", "brute_force"):
            return demo_answers.code(written_as(convention, script.evolved_core))
        if role == "mutator":
            return demo_answers.mutation(
                "Scale the task up.",
                "The parent's approach is too slow or answers another question.",
                script.family,
                written_as(convention, script.evolved_core),
            )
        answers = {
            "writer": demo_answers.written("Evolved", script.statement, script.examples),
            "test_generator": demo_answers.code(script.generator),
            "input_validator": demo_answers.code('print("OK")'),
            "oracle": demo_answers.oracle(script.oracle),
            "judge": demo_answers.judge(),
        }
        return answers.get(role, "no scripted answer")


SEED_STATEMENTS: dict[str, str] = {}

SETTINGS = {
    "target_eval_k": 2,
    "level_confidence": 0.0,
    "max_iters_per_seed": 2,
    "execution_timeout": 2.0,
    "function_execution_timeout": 2.0,
}


@pytest.fixture(scope="module")
def run(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        truncate_engine_tables()
        with FakeOpenAI() as server:
            model = ObedientModel()
            server.responder = model
            seed_set = bw.import_world(
                "conventions", only=(bw.ATCODER_ID, bw.LEETCODE_ID, bw.HUMANEVAL_ID, bw.SCICODE_ID)
            )
            SEED_STATEMENTS.update({p.origin_id: p.statement for p in seed_set.problems.all()})
            panel = w.panel_of(
                "obedient", [w.endpoint(server, "alpha"), w.endpoint(server, "beta")]
            )
            campaign = running(
                campaign_create(
                    name="conventions",
                    seed_set=seed_set,
                    evolver=w.endpoint(server, "evolver"),
                    panel=panel,
                    settings=SETTINGS,
                )
            )
            for lineage in campaign.lineages.all():
                advance_until_done(lineage)
            yield {"campaign": Campaign.objects.get(pk=campaign.pk), "model": model}
        truncate_engine_tables()


def lineage_of(campaign: Campaign, origin_id: str):
    return campaign.lineages.select_related("seed").get(seed__origin_id=origin_id)


def test_every_code_writing_prompt_states_the_one_convention_its_harness_runs(run):
    checked = run["model"].checked
    wrong = [
        (seed, role, key, sorted(found))
        for seed, role, key, found in checked
        if found != {SCRIPTS[seed].convention}
    ]
    assert wrong == []
    asked = {(seed, role) for seed, role, _, _ in checked}
    for seed in SCRIPTS:
        assert {(seed, "solver"), (seed, "mutator"), (seed, "writer")} <= asked
    # Witnesses by column: triangulation for LiveCodeBench, faithfulness for the others.
    assert {(bw.ATCODER_ID, "brute_force"), (bw.LEETCODE_ID, "brute_force")} <= asked
    assert {(bw.HUMANEVAL_ID, "faithfulness"), (bw.SCICODE_ID, "faithfulness")} <= asked


def test_seed_solutions_written_as_the_prompt_says_pass_the_seed_harness(run):
    for origin_id in SCRIPTS:
        lineage = lineage_of(run["campaign"], origin_id)
        assert lineage.seed_attempts == 4
        assert lineage.seed_passes == 4, (origin_id, lineage.stop_reason)


def test_evolved_solutions_written_as_the_prompt_says_pass_the_evolved_harness(run):
    for origin_id, script in SCRIPTS.items():
        cand = lineage_of(run["campaign"], origin_id).candidates.get(round=1)
        # The engine judged the panel's right answer AC ...
        attempt = cand.solver_attempts.get(endpoint__name="alpha", attempt_index=0)
        assert attempt.verdict == "AC", (origin_id, attempt.details)
        # ... and so does the project's judge, called directly on every test.
        result = sandbox.judge(
            written_as(script.convention, script.evolved_core),
            [sandbox.TestSpec(input=t["input"], output=t["output"]) for t in cand.tests],
            harness=cand.harness,
            entry_point=cand.entry_point,
            limits=sandbox.Limits(time_s=10.0, memory_mb=512),
            comparison=contracts.comparison_for(cand.generators.get("contract")),
        )
        assert (result.verdict, result.passed) == ("AC", len(cand.tests)), origin_id


def test_an_evolved_child_keeps_its_parents_harness_and_calling_convention(run):
    for origin_id, script in SCRIPTS.items():
        lineage = lineage_of(run["campaign"], origin_id)
        seed = lineage.seed
        first, second = lineage.candidates.order_by("round")
        assert first.decision == "accepted", (origin_id, first.decision_reason)
        child = first.accepted_problem
        assert second.parent_id == child.pk
        for row in (first, second, child):
            assert (row.harness, row.entry_point) == (seed.harness, seed.entry_point), origin_id
        kind, entry = script.convention
        if kind == "program":
            assert child.starter_code == ""
        elif kind == "method":
            assert child.starter_code.startswith("class Solution:\n    def countPairs(self, ")
        else:
            assert f"def {entry}(" in child.starter_code
            assert "class Solution" not in child.starter_code
        # The second generation's mutator saw the child's starter code.
        mutator = run["model"].prompts[("mutator", f"seed={origin_id};round=2;role=mutator")]
        assert child.starter_code.strip() in mutator


def test_an_evolved_assertion_task_is_tested_by_assertion_programs(run):
    for origin_id in (bw.HUMANEVAL_ID, bw.SCICODE_ID):
        cand = lineage_of(run["campaign"], origin_id).candidates.get(round=1)
        assert cand.harness == "assert"
        assert {t["tier"] for t in cand.tests} == {"public", "small", "medium", "large"}
        assert all("def check(candidate)" in t["input"] for t in cand.tests)
        # The statement shows each example's arguments and the value the reference returned.
        first = cand.tests[0]
        assert first["provenance"]["call"]["arguments"] == SCRIPTS[origin_id].examples[0]
        assert f"```\n{first['provenance']['call']['returns']}\n```" in cand.statement
        # The parent is called by the name the harness calls: it is wrong, never missing.
        check = next(e for e in cand.validation_ledger if e["step"] == "parent check")
        assert check["verdict"] in ("WA", "AC"), (origin_id, check)
