"""Authored answers for the no-filter ablation over the demo (``frontiersmith/ablation.py``),
written as a replay cassette of their own.

The demo campaign's coarse filter rejects proposal 2 ("generalise the inputs": the demo pack
tags it so the filter is told the generalised problem lost what makes strategies differ), so
the demo cassette holds no sampled solution nor scoring environment for it. The ablation arm
skips the filters and asks for them; these are the answers, written by hand for BenchForge
(none comes from a model): three sampled solutions that all take the value/weight-ratio
greedy (one strategy, so the pairwise judge answers "same" and the execution divergence is
0), and, under this proposal's keys, the demo's own scoring-environment answers for
proposal 0 (the same knapsack, whose environment converges). The other proposals' answers are the ones
the demo campaign stored: the arm reuses them and asks nothing for them.

Regenerate after editing: ``python -m frontiersmith.demo.ablation_pack``.
"""

from __future__ import annotations

import json
from pathlib import Path

from evolution.demo.authored import write_authored_cassette

from . import pack

CASSETTE = Path(__file__).resolve().parent / "ablation_cassette.jsonl"
# The demo proposal the coarse filter rejects (pack.OPERATORS[2], "generalize_inputs").
REJECTED_INDEX = pack.OPERATORS.index("generalize_inputs")
ONE_STRATEGY = pack.STRATEGIES[0]
# The roles asked before the build stage (mutation, filter, samples, pair judge).
SELECTION_ROLES = ("mutate", "filter", "solve", "pair_judge")


def answers() -> dict[tuple[str, str], str]:
    """{(role, replay key): content} of the calls the ablation arm makes on the demo."""
    base = f"frontier;round=1;c={REJECTED_INDEX}"
    n = pack.DEMO_SETTINGS["solutions_per_candidate"]
    table = {}
    for i in range(n):
        table[("solve", f"{base};sample={i};role=solve")] = pack.fenced("python", ONE_STRATEGY)
        for j in range(i + 1, n):
            table[("pair_judge", f"{base};pair={i}-{j};role=pair_judge")] = json.dumps(
                {"different": False, "reason": "both take items by value/weight ratio"}
            )
    # The scoring environment: the demo's own answers for proposal 0 (the same knapsack, which
    # converges), under this proposal's keys; whatever calls the build stage makes, the pack
    # answers them for proposal 0.
    good = "frontier;round=1;c=0;"
    for (role, key), content in pack.answers().items():
        if key.startswith(good) and role not in SELECTION_ROLES:
            table[(role, key.replace(good, f"{base};", 1))] = content
    return table


def ablation_endpoints() -> dict:
    """{"mutator", "solver"}: replay endpoints on this cassette, for the demo's ablation arm."""
    from evolution.demo.kind_setup import replayer

    replayed = replayer(CASSETTE)
    return {
        "mutator": replayed("demo-frontier-mutator (replayed, ablation)", "frontier-mutator"),
        "solver": replayed("demo-frontier-solver (replayed, ablation)", "frontier-solver"),
    }


def write_cassette(path: Path = CASSETTE) -> int:
    """The cassette in the demo pack's format (one JSON object a line, keyed, no fingerprint)."""
    return write_authored_cassette(path, answers())


if __name__ == "__main__":
    print(f"{write_cassette()} answers written to {CASSETTE}")
