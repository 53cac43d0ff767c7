"""Authored model answers for FrontierSmith tests, routed by the role and replay-key headers.
The programs are the demo pack's (``frontiersmith/demo/pack.py``), imported, not copied.

The open-ended problem is a 0/1 knapsack: choose item indices whose weights fit the capacity,
maximise the total value. Three sampled strategies (value/weight ratio, highest value,
lightest first) really differ on the generated tests; the baseline takes items in input order
and the weak solution takes only the first item that fits.
"""

from __future__ import annotations

import json
import re

from frontiersmith.demo.pack import (
    BASELINE,
    FORMULATION,
    SEED_STATEMENT,
    STRATEGIES,
    VERIFIER,
    WEAK,
    build_answers,
    fenced,
    mutation,
)
from tests.support.fake_openai import Fault

__all__ = [
    "BASELINE",
    "FORMULATION",
    "SEED_STATEMENT",
    "STRATEGIES",
    "VERIFIER",
    "WEAK",
    "Script",
    "fenced",
    "mutation",
]


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
            parent = {
                name: re.search(rf"- {name} \({label}\): (.*)", prompt).group(1)
                for name, label in (("goal", "O"), ("inputs", "C_I"), ("outputs", "C_O"))
            }
            return "```json\n" + json.dumps(mutation(operator, parent=parent)) + "\n```"
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
        if role in ("test_writer", "verifier_writer", "baseline_writer", "weak_writer"):
            return build_answers(strict="STRICT" in prompt)[role]
        return Fault.http_status(404, '{"error": "no scripted answer"}')

    def count(self, role: str) -> int:
        return sum(1 for r, _ in self.seen if r == role)
