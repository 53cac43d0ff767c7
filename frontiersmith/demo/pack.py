"""The FrontierSmith demo pack: authored model answers, written as a replay cassette.

Every answer below was written by hand for the demo (none comes from a model). The seed is a
closed-ended problem (is there a subset of exactly weight W?); one round of four proposals
mutates it: two "change the goal" proposals turn it into an open-ended knapsack (maximise the
value within the capacity), one "restrict the outputs" proposal whose verifier crashes on
unparsable output (it never converges), one "generalise the inputs" proposal the coarse filter
rejects. Three sampled strategies (value/weight ratio, highest value, lightest first) really
differ on the generated tests; the baseline takes items in input order and the weak solution
one item. The generator, the verifier, the baseline and the weak solution are four separate
answers (the crashing verifier alone is asked again). The tests, the verifier runs, the score
matrices, both divergences and the final selection are computed live: every program runs in
the sandbox. Before the round, the coarse filter is measured on the bundled labelled sets
(authored answers, one wrong per label). ``tests/frontiersmith/scripted.py`` answers the tests' campaigns with these same
programs.

Regenerate the cassette after editing: ``python -m frontiersmith.demo.pack``.
"""

from __future__ import annotations

import json
from pathlib import Path

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


def build_answers(*, strict: bool = False) -> dict[str, str]:
    """{writer role: answer} of the scoring environment's four separate calls; ``strict``: the
    verifier crashes on unparsable output."""
    return {
        "test_writer": fenced("generator", GENERATOR),
        "verifier_writer": fenced("verifier", CRASHING_VERIFIER if strict else VERIFIER),
        "baseline_writer": fenced("baseline", BASELINE),
        "weak_writer": fenced("weak", WEAK),
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
        # The four programs of the scoring environment come from four separate calls. The
        # crashing verifier is asked again until max_build_attempts, alone: the generator,
        # the baseline and the weak solution passed their own checks and are kept.
        strict = operator == "restrict_outputs"
        for role, answer in build_answers(strict=strict).items():
            table[(role, f"{base};attempt=1;role={role}")] = answer
        if strict:
            for attempt in range(2, DEMO_SETTINGS["max_build_attempts"] + 1):
                key = f"{base};attempt={attempt};role=verifier_writer"
                table[("verifier_writer", key)] = fenced("verifier", CRASHING_VERIFIER)
    return table


def write_cassette(path: Path = CASSETTE) -> int:
    lines = []
    for (role, key), content in sorted(answers().items()):
        lines.append(
            json.dumps(
                {
                    "fingerprint": "",
                    "key": key,
                    "role": role,
                    "response": {
                        "content": content,
                        "tokens_in": 400,
                        "tokens_out": len(content.split()),
                    },
                },
                sort_keys=True,
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


if __name__ == "__main__":
    print(f"{write_cassette()} answers written to {CASSETTE}")
