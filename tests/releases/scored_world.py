"""A published release with an open-ended (scored) problem beside the crafted pass/fail ones.

E-OPEN asks for the largest total not above the sum of the integers given: its verifier finds
an answer feasible when it is an integer between 0 and that sum, and the answer itself is the
objective (maximised). Its tests' stored outputs are a weak baseline's (7), so the reference
solution (print the sum, as every crafted problem's) scores (100 - 7) / 100 = 0.93 on each of
its two tests, and ``print(0)`` scores 0. The statement carries "Task E-OPEN.", so the living
tests' loopback panel (``living_support.Panel``) answers it as it answers E-OK: ``strong``
with the sum every time, ``weak`` on samples 0-2 of 4.

The release holds E-OK, E-OVERRIDE, S2 (pass/fail) and E-OPEN (scored).
"""

from __future__ import annotations

from evolution.models import TestCase
from releases import services
from tests.factories import CandidateFactory, EvolvedProblemFactory
from tests.support.gate_rules import SELECTION_TIME_OK

from .builders import HIDDEN_MARKER, SUM_CODE, crafted_world, review, statement

VERIFIER = """import json, sys
doc = json.loads(sys.stdin.read())
total = sum(int(x) for x in doc["input"].split())
try:
    value = int(doc["output"].strip())
except ValueError:
    print(json.dumps({"feasible": False, "message": "not an integer"}))
    raise SystemExit
print(json.dumps({"feasible": 0 <= value <= total, "objective": value, "message": ""}))
"""
COMPARISON = {"mode": "score", "verifier": VERIFIER, "direction": "max"}
# (input, the baseline's output): the sum is 100 on both, the baseline prints 7.
OPEN_TESTS = [("10 20 30 40\n", "7\n"), ("50 50\n", "7\n")]
REFERENCE_SCORE = 0.93


def add_open_ended(world) -> None:
    """E-OPEN, evolved from seed S1, accepted and reviewed like E-OK (no pass@1 of its own:
    the gate reads no pass@1 window for a scored problem)."""
    parent = world.seeds["S1"]
    problem = EvolvedProblemFactory(
        parent=parent,
        title="Evolved E-OPEN",
        statement=statement("E-OPEN") + " Print the largest total you can reach.",
        reference_solution=SUM_CODE + f"# {HIDDEN_MARKER}\n",
        comparison=COMPARISON,
    )
    for ordinal, (given, baseline) in enumerate(OPEN_TESTS):
        TestCase.objects.create(
            problem=problem,
            tier="public" if ordinal == 0 else "small",
            ordinal=ordinal,
            hidden=ordinal > 0,
            input_text=given,
            output_text=baseline,
        )
    CandidateFactory(
        lineage=world.campaign.lineages.get(seed=parent),
        parent=parent,
        decision="accepted",
        accepted_problem=problem,
        passes=0,
        attempts=0,
        level=3,
        validation_ledger=[{"vote": "agree", "source": "triangulation"}],
    )
    review(world, problem, (4, "valid"), (3, "valid"))
    world.evolved["E-OPEN"] = problem


def scored_release(*, publish: bool = True, name: str = "Open Sums"):
    """The crafted world and E-OPEN gated and frozen (and published): 4 items."""
    world = crafted_world(tag=f"-{name}")
    add_open_ended(world)
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name=name)
    release = services.release_create(benchmark=bench, campaigns=[world.campaign])
    services.gate_run_create(release=release)
    release = services.release_freeze(release=release)
    if publish:
        release = services.release_publish(release=release)
    return world, release
