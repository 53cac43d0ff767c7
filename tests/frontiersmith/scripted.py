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
    ACCEPT,
    BASELINE,
    CRASH_DEFECT,
    CRASHING_VERIFIER,
    FORMULATION,
    SEED_STATEMENT,
    STRATEGIES,
    TEST_AGENT_TOOLS,
    VERIFIER,
    VERIFIER_AGENT_TOOLS,
    WEAK,
    action,
    fenced,
    mutation,
    write_answers,
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
        if role == "test_agent":
            return write_answers()[role]
        if role == "verifier_agent":
            return verifier_agent(prompt)
        if role == "verifier_review":
            return verifier_review(body["messages"])
        if role == "test_review":
            return test_review(body["messages"])
        return Fault.http_status(404, '{"error": "no scripted answer"}')

    def count(self, role: str) -> int:
        return sum(1 for r, _ in self.seen if r == role)


# The reviews argue from what the tools really returned (the sandbox's output, read back from
# the conversation), not from the replay key.
RESULT = re.compile(r"^(T\d+) (run_\w+)\((.*)\) -> (.*)$", re.M)


def tool_results(messages: list[dict]) -> list[dict]:
    """Every tool result shown to the agent so far: id, tool, status, stdout."""
    found = []
    for message in messages:
        if message["role"] != "user" or not message["content"].startswith("Tool results"):
            continue
        text = message["content"]
        heads = list(RESULT.finditer(text))
        for i, head in enumerate(heads):
            end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
            block = text[head.end() : end]
            out = re.search(r"stdout:\n```\n(.*?)\n```", block, re.S)
            found.append(
                {
                    "id": head.group(1),
                    "tool": head.group(2),
                    "status": head.group(4),
                    "stdout": out.group(1) if out else "",
                }
            )
    return found


def knapsack_input_problem(text: str) -> str:
    """What is wrong with a generated knapsack input ('' when it is valid)."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    try:
        n, _cap = map(int, lines[0].split())
    except (ValueError, IndexError):
        return f"the first line {lines[:1]} is not 'n W'"
    if len(lines) - 1 != n:
        return f"the first line announces {n} items but {len(lines) - 1} follow"
    return ""


def verifier_review(messages: list[dict]) -> str:
    """The verifier agent: runs the generator, names a malformed input as a defect."""
    results = tool_results(messages)
    if not results:
        return action(VERIFIER_AGENT_TOOLS)
    for r in results:
        if r["tool"] == "run_generator":
            problem = r["status"] != "OK" and f"the generator failed: {r['status']}"
            problem = problem or knapsack_input_problem(r["stdout"])
            if problem:
                return action(
                    {
                        "verdict": "defect",
                        "program": "generator",
                        "defect": problem,
                        "evidence": [r["id"]],
                    }
                )
    return action(ACCEPT)


def verifier_agent(prompt: str) -> str:
    """The verifier agent writes the blocks it is asked for (all three in round 1, then the
    ones a defect was named against); a STRICT statement's verifier crashes on unparsable
    output, however often it is rewritten."""
    wanted = re.findall(r"```(\w+)", prompt.split("Answer with one block for each of:")[-1])
    code = {
        "verifier": CRASHING_VERIFIER if "STRICT" in prompt else VERIFIER,
        "baseline": BASELINE,
        "weak": WEAK,
    }
    return "".join(fenced(name, code[name]) for name in wanted)


def test_review(messages: list[dict]) -> str:
    """The test-case agent: runs the verifier, names a crash as a defect."""
    results = tool_results(messages)
    if not results:
        return action(TEST_AGENT_TOOLS)
    crashed = [r["id"] for r in results if r["status"] == "CRASHED"]
    return action({**CRASH_DEFECT, "evidence": crashed} if crashed else ACCEPT)
