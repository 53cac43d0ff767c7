"""Table 5's column follows the benchmark, not the harness: LiveCodeBench seeds of either
harness (AtCoder and Codeforces stdin, LeetCode call-based) evolve with the LiveCodeBench
column (brute-force triangulation; small/medium/large/stress 5/5/5/3; 6 s), SciCode seeds with
the SciCode column (statement faithfulness; 2/2/2; 30 s), and HumanEval, which the paper does
not evolve, with the column the project declares for it (SciCode's)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from evolution.benchevolver.demo import answers as demo_answers
from evolution.benchevolver.engine.config import EvolutionSettings
from evolution.benchevolver.models import CandidateStage
from evolution.benchevolver.services import campaign_create, lineage_advance
from evolution.benchevolver.stages.common import Ctx
from evolution.models import LLMCall

from . import benchmark_world as bw
from . import lcb_world as w
from .test_scenarios import running

pytestmark = pytest.mark.django_db(transaction=True)

LCB_COLUMN = {"small": 5, "medium": 5, "large": 5, "stress": 3}
SCICODE_COLUMN = {"small": 2, "medium": 2, "large": 2}


def test_each_benchmark_gets_its_column_whatever_its_harness(fake_server):
    seed_set = bw.import_world()
    campaign = campaign_create(
        name="columns",
        seed_set=seed_set,
        evolver=w.endpoint(fake_server, "evolver"),
        panel=w.panel_of("p", [w.endpoint(fake_server, "good")]),
    )
    seen = {}
    for lineage in campaign.lineages.select_related("seed"):
        ctx = Ctx(
            campaign=campaign,
            lineage=lineage,
            settings=EvolutionSettings.from_dict(campaign.settings),
        )
        seen[lineage.seed.origin_id] = (
            lineage.seed.harness,
            ctx.column,
            ctx.limits().time_s,
            ctx.settings.tier_counts(ctx.column),
            ctx.settings.memory_raw_window,
            ctx.settings.global_memory_max_entries,
        )
    lcb = (6.0, LCB_COLUMN, 10, 50)
    scicode = (30.0, SCICODE_COLUMN, 5, 20)
    assert seen == {
        bw.CODEFORCES_ID: ("stdio", "livecodebench", *lcb),
        bw.ATCODER_ID: ("stdio", "livecodebench", *lcb),
        bw.LEETCODE_ID: ("function", "livecodebench", *lcb),
        bw.SCICODE_ID: ("assert", "scicode", *scicode),
        bw.HUMANEVAL_ID: ("assert", "scicode", *scicode),
    }


# LeetCode 2824 evolved: the same call (``Solution().countPairs(nums, target)``) on arrays of
# up to 10^5 values, where only sorting and two pointers are fast enough.
COUNT_PAIRS_FAST = """
class Solution:
    def countPairs(self, nums: List[int], target: int) -> int:
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
COUNT_PAIRS_BRUTE = """
class Solution:
    def countPairs(self, nums: List[int], target: int) -> int:
        n = len(nums)
        return sum(1 for i in range(n) for j in range(i + 1, n) if nums[i] + nums[j] < target)
"""
COUNT_PAIRS_EVOLVED = """
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

sizes = {"small": rng.randint(1, 8), "medium": rng.randint(50, 300), "large": 1000, "stress": 50000}
n = sizes[args.tier]
bound = 50 if args.tier == "small" else 10**9
print(json.dumps([rng.randint(-bound, bound) for _ in range(n)]))
print(json.dumps(rng.randint(-bound, bound)))
"""
)
EXAMPLES = ["[-1, 1, 2, 3, 1]\n2\n", "[5, -5, 0, 10]\n1\n"]


class CountPairsModel:
    """Scripted answers for the LeetCode seed: the panel solves the seed (one wrong attempt:
    level 2); the mutator evolves it; the witnesses of triangulation answer."""

    def __init__(self):
        self.prompts: list[tuple[str, str, str]] = []

    def __call__(self, body, headers):
        role = headers.get("x-benchforge-role", "")
        key = headers.get("x-benchforge-key", "")
        self.prompts.append((role, key, body["messages"][0]["content"]))
        if role == "solver":
            wrong = "round=0;model=shaky;attempt=0" in key
            return demo_answers.code(
                COUNT_PAIRS_BRUTE.replace("<", ">") if wrong else bw.COUNT_PAIRS_OK
            )
        answers = {
            "mutator": demo_answers.mutation(
                "Count the pairs on arrays of up to 10^5 values: sort, then two pointers.",
                "The double loop is quadratic.",
                "two pointers",
                COUNT_PAIRS_FAST,
            ),
            "writer": demo_answers.written("Count Pairs at Scale", COUNT_PAIRS_EVOLVED, EXAMPLES),
            "test_generator": demo_answers.code(COUNT_PAIRS_GENERATOR),
            "brute_force": demo_answers.code(COUNT_PAIRS_BRUTE),
            "oracle": demo_answers.oracle(["3", "2"]),
        }
        return answers.get(role, "no scripted answer")


def test_a_call_based_livecodebench_seed_is_triangulated_with_the_livecodebench_column(
    fake_server,
):
    model = CountPairsModel()
    fake_server.responder = model
    seed_set = bw.import_world("leetcode", only=(bw.LEETCODE_ID,))
    campaign = running(
        campaign_create(
            name="lcb call-based",
            seed_set=seed_set,
            evolver=w.endpoint(fake_server, "evolver"),
            panel=w.panel_of(
                "p", [w.endpoint(fake_server, "good"), w.endpoint(fake_server, "shaky")]
            ),
            # The LiveCodeBench column's time-out is the one that must apply (1.5 s: the quadratic
            # brute force cannot finish a stress test); the SciCode column's would let it.
            settings={
                "target_eval_k": 2,
                "execution_timeout": 1.5,
                "function_execution_timeout": 120.0,
            },
        )
    )
    lineage = campaign.lineages.get()
    for _ in range(40):
        lineage.refresh_from_db()
        cand = lineage.candidates.first()
        if cand is not None and (cand.decision or cand.stage == CandidateStage.VALIDATED):
            break
        assert lineage_advance(lineage_id=lineage.pk).outcome == "done"
    assert (lineage.seed_passes, lineage.seed_attempts) == (3, 4)
    cand = lineage.candidates.get()
    assert (cand.decision, cand.stage, cand.valid) == ("", CandidateStage.VALIDATED, True)
    assert (cand.harness, cand.entry_point) == ("function", "countPairs")

    # Tests of the LiveCodeBench column: 2 public examples, then 5/5/5/3 generated.
    assert Counter(t["tier"] for t in cand.tests) == {"public": 2, **LCB_COLUMN}
    steps = {e["step"]: e for e in cand.validation_ledger}
    assert steps["vote"]["outcome"] == "agree"
    assert steps["vote"]["brute_force_status"] == ["OK", "OK"]
    # The brute force ran as the harness calls it, under the 1.5 s limit: the stress tests are
    # infeasible for it, every other hidden test agrees.
    assert steps["hidden check"]["outcome"] == "agree"
    assert steps["hidden check"]["infeasible"] == 3
    assert steps["hidden check"]["checked"] == 15
    assert steps["parent check"]["outcome"] == (
        "parent too slow: right on small, medium, large; TLE on stress"
    )
    assert "faithfulness" not in steps
    roles = set(LLMCall.objects.filter(campaign=campaign).values_list("role", flat=True))
    assert {"brute_force", "oracle"} <= roles and "faithfulness" not in roles

    # The witnesses were asked for the harness's call and its JSON return values.
    (brute_prompt,) = [text for role, _, text in model.prompts if role == "brute_force"]
    assert "Solution().countPairs(" in brute_prompt
    assert "at module level" not in brute_prompt
    (oracle_prompt,) = [text for role, _, text in model.prompts if role == "oracle"]
    assert "JSON value `countPairs` returns" in oracle_prompt
    assert [json.loads(t["output"]) for t in cand.tests[:2]] == [3, 2]
