"""Authored model answers for FrontierSmith tests, routed by the role and replay-key headers.

The open-ended problem is a 0/1 knapsack: choose item indices whose weights fit the capacity,
maximise the total value. Three sampled strategies (value/weight ratio, highest value,
lightest first) really differ on the generated tests; the baseline takes items in input order
and the weak solution takes only the first item that fits.
"""

from __future__ import annotations

import json
import re

# The knapsack world's programs are the demo pack's: the tests and `make demo` run the same
# authored answers (re-exported here for the tests that import them from this module).
from frontiersmith.demo.pack import (
    BASELINE,
    CRASHING_VERIFIER,
    FORMULATION,
    GENERATOR,
    SEED_STATEMENT,
    STRATEGIES,
    VERIFIER,
    WEAK,
)
from tests.support.fake_openai import Fault

__all__ = ["BASELINE", "FORMULATION", "SEED_STATEMENT", "STRATEGIES", "VERIFIER", "WEAK"]


def mutation(operator: str, *, statement_tag: str = "", parent: dict | None = None) -> dict:
    changed = dict(parent or FORMULATION)
    part = {"change_goal": "goal", "restrict_outputs": "outputs", "generalize_inputs": "inputs"}
    changed[part[operator]] = f"{changed[part[operator]]} (mutated by {operator})"
    return {
        "formulation": changed,
        "title": f"Knapsack value ({operator})",
        "statement": (
            f"{statement_tag}Read n and a capacity W, then n lines `w v`. Print the indices "
            "(0-based) of a set of distinct items whose total weight is at most W. Maximise "
            "the total value of the chosen items."
        ),
        "objective": "total value of the chosen items",
        "direction": "max",
    }


def fenced(language: str, code: str) -> str:
    return f"```{language}\n{code}```\n"


class Script:
    """The responder: ``operator -> behaviour`` decides what each candidate becomes.

    - change_goal: a good candidate (converges);
    - restrict_outputs: its verifier crashes on unparsable output (never converges);
    - generalize_inputs: the coarse filter rejects it (no strategy diversity).
    Calibration: closed-ended probes are rejected except those whose statement says
    ``TRICKY`` (false positives); open-ended probes accepted except ``MURKY`` ones.
    """

    def __init__(self):
        self.seen: list[tuple[str, str]] = []

    def __call__(self, body, headers):
        lowered = {k.lower(): v for k, v in headers.items()}
        role = lowered.get("x-benchforge-role", "")
        key = lowered.get("x-benchforge-key", "")
        self.seen.append((role, key))
        prompt = body["messages"][-1]["content"]
        if role == "extract":
            return json.dumps(FORMULATION)
        if role == "mutate":
            operator = re.search(r"op=(\w+)", key).group(1)
            tag = {"generalize_inputs": "REJECTME ", "restrict_outputs": "STRICT "}.get(
                operator, ""
            )
            parent = {
                name: re.search(rf"- {name} \({label}\): (.*)", prompt).group(1)
                for name, label in (("goal", "O"), ("inputs", "C_I"), ("outputs", "C_O"))
            }
            answer = mutation(operator, statement_tag=tag, parent=parent)
            return "```json\n" + json.dumps(answer) + "\n```"
        if role == "filter":
            verdict = not any(word in prompt for word in ("REJECTME", "MURKY", "exactly W"))
            if "TRICKY" in prompt:
                verdict = True
            return json.dumps(
                {"objective": verdict, "strategies": verdict, "scoring": True, "reason": "r"}
            )
        if role == "solve":
            index = int(re.search(r"sample=(\d+)", key).group(1))
            return fenced("python", STRATEGIES[index % len(STRATEGIES)])
        if role == "pair_judge":
            i, j = map(int, re.search(r"pair=(\d+)-(\d+)", key).groups())
            return json.dumps({"different": i % 3 != j % 3, "reason": "r"})
        if role == "test_writer":
            return fenced("generator", GENERATOR)
        if role == "verifier_writer":
            verifier = CRASHING_VERIFIER if "STRICT" in prompt else VERIFIER
            return (
                fenced("verifier", verifier) + fenced("baseline", BASELINE) + fenced("weak", WEAK)
            )
        return Fault.http_status(404, '{"error": "no scripted answer"}')

    def count(self, role: str) -> int:
        return sum(1 for r, _ in self.seen if r == role)
