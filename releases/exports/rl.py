"""The RL exports' records and rewards: BenchEvolver Appendix D.3's r = c + lambda (f - 1),
X-Coder A.2's pass fraction for its items, a verifier's score for open-ended ones."""

from __future__ import annotations

from collections.abc import Iterator

from evolution.judging.difficulty import solver_messages
from evolution.llm.parsing import ParseError, extract_code
from evolution.sandbox import scoring

from ..models import Release, ReleaseItem
from .rows import dump_line, release_items, split_tests

RL_LAMBDA = 0.1
# The grader's per-test wall-clock limit in Appendix D.3.
RL_TEST_TIME_LIMIT_S = 6.0

REWARD_SPEC = {
    "formula": "r = c + lambda * (f - 1)",
    "lambda": RL_LAMBDA,
    "c": "1 if the last fenced code block of the final answer passes every test, else 0",
    "f": "1 if the answer contains at least one fenced code block, else 0",
    "per_test_time_limit_s": RL_TEST_TIME_LIMIT_S,
    "range": [-RL_LAMBDA, 1.0],
}
SCORED_REWARD_SPEC = {
    "formula": "r = mean over tests of max(0, sigma (O(s) - O(b)) / max(O(s), O(b)))",
    "O": "the objective the comparison's verifier prints for an output (feasible outputs only)",
    "b": "the baseline solution, whose output is each test's stored output",
    "sigma": "+1 when comparison.direction is max, -1 when min",
    "zero": "crash, timeout, unparsable or infeasible output",
    "range": [0.0, 1.0],
}

# X-Coder / SynthSmith appendix A.2, eq. (6): a continuous pass-fraction reward, no format term.
PASS_FRACTION_REWARD_SPEC = {
    "name": "pass_fraction",
    "source": "X-Coder / SynthSmith appendix A.2, eq. (6)",
    "formula": "R = -2 if no code is extracted or it fails to compile; 0 if it compiles but "
    "passes no test; 5.0 * passed / total otherwise",
    "no_code": -2.0,
    "scale": 5.0,
    "per_test_time_limit_s": RL_TEST_TIME_LIMIT_S,
    "range": [-2.0, 5.0],
}
# The reward of an item made by a method whose document defines its own (the record's
# ``method``); every other item keeps REWARD_SPEC (BenchEvolver D.3).
RL_REWARD_BY_METHOD = {"xcoder": PASS_FRACTION_REWARD_SPEC}


def rl_pass_fraction_reward(*, has_code: bool, compiles: bool, passed: int, total: int) -> float:
    """A.2 eq. (6): -2 without code or when it does not compile, else 5.0 * passed / total."""
    if not has_code or not compiles:
        return PASS_FRACTION_REWARD_SPEC["no_code"]
    if passed <= 0 or total <= 0:
        return 0.0
    return PASS_FRACTION_REWARD_SPEC["scale"] * passed / total


def rl_reward(*, has_code_block: bool, all_tests_pass: bool) -> float:
    """BenchEvolver Appendix D.3: 1 for a correct program, 0 for a wrong but well-formatted
    one, -0.1 for an answer with no code block."""
    c = 1.0 if (all_tests_pass and has_code_block) else 0.0
    f = 1.0 if has_code_block else 0.0
    return c + RL_LAMBDA * (f - 1.0)


def rl_has_code_block(text: str) -> bool:
    try:
        return bool(extract_code(text, language="python"))
    except ParseError:
        return False


def rl_record(item: ReleaseItem) -> dict:
    record = item.record
    messages, template = solver_messages(
        statement=record["statement"], harness=record["harness"], entry_point=record["entry_point"]
    )
    public, hidden = split_tests(item)
    return {
        "id": item.public_id,
        "prompt": messages,
        "prompt_template": f"{template.name}@{template.version}",
        "harness": record["harness"],
        "entry_point": record["entry_point"],
        "time_limit_s": record["time_limit_s"],
        "memory_mb": record["memory_mb"],
        "comparison": record.get("comparison") or {},
        "tests": [{"input": t["input"], "output": t["output"]} for t in public + hidden],
        # An open-ended item's reward is its verifier's score (evolution.sandbox.scoring).
        "reward": SCORED_REWARD_SPEC
        if scoring.is_scored(record.get("comparison"))
        else RL_REWARD_BY_METHOD.get(record.get("method") or "", REWARD_SPEC),
        "origin": item.origin,
        "item_hash": item.content_hash,
    }


def export_rl(release: Release) -> Iterator[str]:
    for item in release_items(release):
        yield dump_line(rl_record(item))
