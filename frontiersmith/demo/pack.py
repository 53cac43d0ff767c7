"""The FrontierSmith demo pack: authored model answers, written as a replay cassette.

Every answer below was written by hand for the demo (none comes from a model). The seed is a
closed-ended problem (is there a subset of exactly weight W?); one round of four proposals
mutates it: two "change the goal" proposals turn it into an open-ended knapsack (maximise the
value within the capacity), one "restrict the outputs" proposal whose verifier crashes on
unparsable output (it never converges), one "generalise the inputs" proposal the coarse filter
rejects. Three sampled strategies (value/weight ratio, highest value, lightest first) really
differ on the generated tests; the baseline takes items in input order and the weak solution
one item. The scoring environment is built by two agents: the test-case agent writes the
generator, the verifier agent the verifier, the baseline and the weak solution; each reviews
the other's programs by running them through tool calls (authored requests, run live in the
sandbox) and answers with an authored verdict: the good proposals agree in one round; the
crashing verifier is caught by the test-case agent running it on unparsable output, named as a
defect with that tool result as evidence, and rewritten (still crashing) until the round bound.
The tests, the verifier runs, the score
matrices, both divergences and the final selection are computed live: every program runs in
the sandbox. Before the round, the coarse filter is measured on the bundled labelled sets
(authored answers, one wrong per label). ``tests/frontiersmith/scripted.py`` answers the tests' campaigns with these same
programs.

Regenerate the cassette after editing: ``python -m frontiersmith.demo.pack``.
"""

from __future__ import annotations

import json
from pathlib import Path

from evolution.demo.authored import write_authored_cassette
from frontiersmith import calibration

CASSETTE = Path(__file__).resolve().parent / "cassette.jsonl"
SEED_SET = "frontiersmith-demo-seeds"
SEED_ORIGIN = ("frontiersmith-demo", "knapsack-exact")
SEED_TITLE = "Exact subset weight"
DEMO_SETTINGS = {
    "rounds": 1,
    "budget_candidates": 4,
    "n_div": 3,
    "n_final": 1,
    "solutions_per_candidate": 3,
    "tests_per_candidate": 3,
    "agent_rounds": 2,
    "max_build_attempts": 2,
    "execution_timeout": 3.0,
    "memory_mb": 256,
}
# The proposals of round 1, in order (the engine cycles through the three operators).
OPERATORS = ("change_goal", "restrict_outputs", "generalize_inputs", "change_goal")

SEED_STATEMENT = (
    "Read n and a capacity W, then n lines `w v`. Print YES if some subset of the items has "
    "total weight exactly W, otherwise NO."
)

GENERATOR = """\
import random, sys
seed = int(sys.stdin.read().split()[0])
rng = random.Random(seed)
n = 12 + seed
print(n, 40)
for _ in range(n):
    print(rng.randint(1, 20), rng.randint(1, 30))
"""

VERIFIER = """\
import json, sys
doc = json.loads(sys.stdin.read())
lines = doc["input"].split("\\n")
n, cap = map(int, lines[0].split())
items = [tuple(map(int, lines[1 + i].split())) for i in range(n)]
try:
    chosen = [int(x) for x in doc["output"].split()]
except ValueError:
    print(json.dumps({"feasible": False, "message": "unparsable output"}))
    raise SystemExit
if not chosen or len(set(chosen)) != len(chosen) or any(not 0 <= i < n for i in chosen):
    print(json.dumps({"feasible": False, "message": "bad or repeated indices"}))
    raise SystemExit
if sum(items[i][0] for i in chosen) > cap:
    print(json.dumps({"feasible": False, "message": "over capacity"}))
    raise SystemExit
print(json.dumps({"feasible": True, "objective": sum(items[i][1] for i in chosen)}))
"""

# Crashes on output that is not integers: the verifier check catches it every time.
CRASHING_VERIFIER = VERIFIER.replace(
    """try:
    chosen = [int(x) for x in doc["output"].split()]
except ValueError:
    print(json.dumps({"feasible": False, "message": "unparsable output"}))
    raise SystemExit
""",
    'chosen = [int(x) for x in doc["output"].split()]\n',
)


def _solution(order: str) -> str:
    return f"""\
import sys
data = sys.stdin.read().split()
n, cap = int(data[0]), int(data[1])
items = [(int(data[2 + 2 * i]), int(data[3 + 2 * i]), i) for i in range(n)]
items.sort(key={order})
left, chosen = cap, []
for w, v, i in items:
    if w <= left:
        chosen.append(i)
        left -= w
print(*chosen)
"""


BASELINE = _solution("lambda t: t[2]")
WEAK = """\
import sys
data = sys.stdin.read().split()
n, cap = int(data[0]), int(data[1])
for i in range(n):
    if int(data[2 + 2 * i]) <= cap:
        print(i)
        break
"""
STRATEGIES = [
    _solution("lambda t: -t[1] / t[0]"),
    _solution("lambda t: -t[1]"),
    _solution("lambda t: t[0]"),
]
FORMULATION = {
    "goal": "decide whether a subset has total weight exactly W",
    "inputs": "n <= 30 items with integer weights and values, capacity W",
    "outputs": "YES or NO",
}
# The bundled labelled problems the demo's authored filter answers get wrong: a closed-ended
# one it accepts (a false positive) and an open-ended one it rejects (a false negative).
CALIBRATION_SLIPS = ("closed-interval-scheduling", "open-min-true-2sat")
# What the filter is told to reject (the "generalise the inputs" proposal loses the structure
# that makes strategies differ), and the proposal whose verifier is too strict to converge.
REJECTED_TAG = "REJECTME "
STRICT_TAG = "STRICT "


def mutation(operator: str, *, parent: dict | None = None) -> dict:
    """The authored mutation of ``parent`` (the seed's formulation unless given)."""
    changed = dict(parent or FORMULATION)
    part = {"change_goal": "goal", "restrict_outputs": "outputs", "generalize_inputs": "inputs"}
    changed[part[operator]] = f"{changed[part[operator]]} (mutated by {operator})"
    tag = {"generalize_inputs": REJECTED_TAG, "restrict_outputs": STRICT_TAG}.get(operator, "")
    return {
        "formulation": changed,
        "title": f"Knapsack value ({operator})",
        "statement": (
            f"{tag}Read n and a capacity W, then n lines `w v`. Print the indices "
            "(0-based) of a set of distinct items whose total weight is at most W. Maximise "
            "the total value of the chosen items."
        ),
        "objective": "total value of the chosen items",
        "direction": "max",
    }


def fenced(language: str, code: str) -> str:
    return f"```{language}\n{code}```\n"


def write_answers(*, strict: bool = False) -> dict[str, str]:
    """{writer role: answer} of the two agents' first round; ``strict``: the verifier crashes
    on unparsable output."""
    return {
        "test_agent": fenced("generator", GENERATOR),
        "verifier_agent": fenced("verifier", CRASHING_VERIFIER if strict else VERIFIER)
        + fenced("baseline", BASELINE)
        + fenced("weak", WEAK),
    }


def action(data: dict) -> str:
    return "```json\n" + json.dumps(data) + "\n```\n"


# The reviews' tool requests (each agent runs the other's programs) and verdicts.
VERIFIER_AGENT_TOOLS = {
    "tools": [
        {"tool": "run_generator", "seed": 1},
        {"tool": "run_generator", "seed": 2},
    ]
}
TEST_AGENT_TOOLS = {
    "tools": [
        {"tool": "run_verifier", "seed": 1, "output": "not an answer"},
        {"tool": "run_verifier", "seed": 1, "program": "baseline"},
    ]
}
ACCEPT = {"verdict": "accept"}
CRASH_DEFECT = {
    "verdict": "defect",
    "program": "verifier",
    "defect": "the verifier crashed on the output 'not an answer' instead of rejecting it",
    "evidence": ["T1"],
}


def review_answers(*, strict: bool = False) -> dict[tuple[str, int], str]:
    """{(review role, reply number): answer} of one round's two reviews."""
    return {
        ("verifier_review", 1): action(VERIFIER_AGENT_TOOLS),
        ("verifier_review", 2): action(ACCEPT),
        ("test_review", 1): action(TEST_AGENT_TOOLS),
        ("test_review", 2): action(CRASH_DEFECT if strict else ACCEPT),
    }


def answers() -> dict[tuple[str, str], str]:
    """{(role, replay key): content} of every authored answer."""
    seed = SEED_ORIGIN[1]
    table = {("extract", f"frontier;extract={seed};role=extract"): json.dumps(FORMULATION)}
    # The coarse filter on the bundled labelled sets (frontiersmith/calibration_sets.json):
    # authored verdicts, right except for one problem of each label, so the demo page shows a
    # false-positive and a false-negative rate. They measure no model.
    for label, items in calibration.sets().items():
        for item in items:
            right = label == "open"
            accepted = (not right) if item["id"] in CALIBRATION_SLIPS else right
            table[("filter", f"frontier;calibrate={label};problem={item['id']};role=filter")] = (
                json.dumps(
                    {
                        "objective": accepted,
                        "strategies": accepted,
                        "scoring": True,
                        "reason": "authored",
                    }
                )
            )
    for c, operator in enumerate(OPERATORS):
        base = f"frontier;round=1;c={c}"
        table[("mutate", f"{base};seed={seed};op={operator};role=mutate")] = (
            "```json\n" + json.dumps(mutation(operator)) + "\n```"
        )
        passes = operator != "generalize_inputs"
        table[("filter", f"{base};role=filter")] = json.dumps(
            {"objective": passes, "strategies": passes, "scoring": True, "reason": "authored"}
        )
        if not passes:
            continue
        n = DEMO_SETTINGS["solutions_per_candidate"]
        for i in range(n):
            table[("solve", f"{base};sample={i};role=solve")] = fenced(
                "python", STRATEGIES[i % len(STRATEGIES)]
            )
            for j in range(i + 1, n):
                table[("pair_judge", f"{base};pair={i}-{j};role=pair_judge")] = json.dumps(
                    {"different": i % 3 != j % 3, "reason": "different orderings of the items"}
                )
        # The scoring environment: the two agents write, then review each other's programs
        # with tools. The crashing verifier is named as a defect every round and rewritten
        # (alone) until the round bound; the generator, baseline and weak solution are kept.
        strict = operator == "restrict_outputs"
        rounds = DEMO_SETTINGS["agent_rounds"] if strict else 1
        for rnd in range(1, rounds + 1):
            at = f"{base};agent_round={rnd}"
            if rnd == 1:
                for role, answer in write_answers(strict=strict).items():
                    table[(role, f"{at};role={role}")] = answer
            else:
                key = f"{at};role=verifier_agent"
                table[("verifier_agent", key)] = fenced("verifier", CRASHING_VERIFIER)
            for (role, step), answer in review_answers(strict=strict).items():
                table[(role, f"{at};step={step};role={role}")] = answer
    return table


def write_cassette(path: Path = CASSETTE) -> int:
    return write_authored_cassette(path, answers())


if __name__ == "__main__":
    print(f"{write_cassette()} answers written to {CASSETTE}")
