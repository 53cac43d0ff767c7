"""Every code-writing prompt, rendered for every harness, states one calling convention, the one
its harness runs; a solution written exactly that way passes the harness (the project's judge,
``evolution.sandbox.judge``). The stored-campaign version of this, on real LiveCodeBench,
HumanEval and SciCode seeds, is tests/evolution/benchevolver/test_harness_conventions.py."""

from __future__ import annotations

import pytest

from evolution import sandbox
from evolution.benchevolver.engine import prompts, propose, validate
from evolution.judging import difficulty
from tests.support.conventions import conventions_in, written_as

STATEMENT = "# Add\n\nReturn the sum of the two integers a and b.\n"
PROGRAM = "a, b = map(int, input().split())\nprint(a + b)\n"
CORE = "def _solve(a, b):\n    return a + b\n"

CASES = {
    "stdin program": dict(
        harness="stdio",
        entry_point="",
        starter="",
        tests=[("3 4\n", "7\n"), ("-1 1\n", "0\n")],
        convention=("program", ""),
    ),
    "call-based with a class Solution starter": dict(
        harness="function",
        entry_point="addTwo",
        starter="class Solution:\n    def addTwo(self, a: int, b: int) -> int:\n        ",
        tests=[("3\n4", "7"), ("-1\n1", "0")],
        convention=("method", "addTwo"),
    ),
    "call-based module-level function": dict(
        harness="function",
        entry_point="add_two",
        starter="",
        tests=[("3\n4", "7"), ("-1\n1", "0")],
        convention=("function", "add_two"),
    ),
    "assertion programs (HumanEval, SciCode)": dict(
        harness="assert",
        entry_point="add_two",
        starter='def add_two(a: int, b: int) -> int:\n    """Return a + b."""\n',
        tests=[("def check(candidate):\n    assert candidate(3, 4) == 7\n", "")],
        convention=("function", "add_two"),
    ),
}


def _core(case: dict) -> str:
    return PROGRAM if case["harness"] == "stdio" else CORE


def _render(prompt: str, case: dict) -> str:
    harness, entry, starter = case["harness"], case["entry_point"], case["starter"]
    reference = written_as(case["convention"], _core(case))
    if prompt == "solver":
        messages, _ = difficulty.solver_messages(
            statement=STATEMENT, harness=harness, entry_point=entry, starter_code=starter
        )
    elif prompt == "mutator":
        messages, _ = propose.mutator_messages(
            parent_code=reference,
            harness=harness,
            entry_point=entry,
            parent_level=1,
            seed_level=1,
            lineage_memory="",
            global_memory="",
            starter_code=starter,
        )
    elif prompt == "writer":
        messages, _ = propose.writer_messages(
            code=reference, harness=harness, entry_point=entry, time_limit=6.0, starter_code=starter
        )
    elif prompt == "brute_force":
        messages, _ = validate.brute_force_messages(
            statement=STATEMENT, harness=harness, entry_point=entry, starter_code=starter
        )
    else:
        messages, _ = validate.repair_messages(
            target=validate.REFERENCE,
            statement=STATEMENT,
            reference=reference,
            brute_force="",
            evidence="",
            harness=harness,
            entry_point=entry,
            starter_code=starter,
        )
    return messages[0]["content"]


@pytest.mark.parametrize("prompt", ["solver", "mutator", "writer", "brute_force", "repair"])
@pytest.mark.parametrize("name", list(CASES))
def test_the_prompt_states_the_harness_convention_and_code_written_so_passes(name, prompt):
    case = CASES[name]
    found = conventions_in(_render(prompt, case), hide=[STATEMENT])
    assert found == {case["convention"]}
    (convention,) = found
    result = sandbox.judge(
        written_as(convention, _core(case)),
        [sandbox.TestSpec(input=i, output=o) for i, o in case["tests"]],
        harness=case["harness"],
        entry_point=case["entry_point"],
        limits=sandbox.Limits(time_s=10.0, memory_mb=256),
    )
    assert result.verdict == "AC", result.to_dict()


def test_a_starter_is_shown_once_without_restating_the_call():
    block = prompts.starter_block(
        CASES["assertion programs (HumanEval, SciCode)"]["starter"], "assert"
    )
    assert "keeping the function's signature" in block
    assert "Solution()" not in block and "JSON" not in block
    parent = prompts.starter_block(
        "class Solution:\n    def f(self):\n        ", "function", parent=True
    )
    assert parent.startswith("\n## The parent task's starter code\n")


class TestCallingConventionOfAMutation:
    def test_a_call_based_mutation_must_keep_class_solution_and_the_method(self):
        method = "class Solution:\n    def countPairs(self, nums, target):\n        return 0\n"
        module = "def countPairs(nums, target):\n    return 0\n"
        assert prompts.calling_convention_problem(method, "countPairs", prompts.METHOD) == ""
        assert "`Solution.countPairs`" in prompts.calling_convention_problem(
            module, "countPairs", prompts.METHOD
        )

    def test_a_function_level_mutation_keeps_the_module_level_entry_point(self):
        renamed = "def count_close_pairs(numbers, threshold):\n    return 0\n"
        assert "`has_close_elements` at module level" in prompts.calling_convention_problem(
            renamed, "has_close_elements", prompts.ASSERTION
        )
        kept = "def has_close_elements(numbers, threshold):\n    return 0\n"
        assert (
            prompts.calling_convention_problem(kept, "has_close_elements", prompts.ASSERTION) == ""
        )
        # The function harness would call a class Solution instead of the module's function.
        both = kept + "\n\nclass Solution:\n    pass\n"
        assert "instead of" in prompts.calling_convention_problem(
            both, "has_close_elements", prompts.FUNCTION
        )
        # A stdin program has no entry point; code that does not parse is left to execution.
        assert prompts.calling_convention_problem("print(1)\n", "", prompts.PROGRAM) == ""
        assert prompts.calling_convention_problem("def (", "f", prompts.ASSERTION) == ""


class TestEvolvedStarter:
    def test_a_class_solution_parent_gives_a_class_solution_starter(self):
        code = "class Solution:\n    def countPairs(self, nums: List[int], target: int) -> int:\n        return 0\n"
        starter = prompts.starter_from_solution(
            code, "countPairs", "function", "class Solution:\n    def countPairs(self, nums):\n"
        )
        assert starter == (
            "class Solution:\n    def countPairs(self, nums: List[int], target: int) -> int:\n        "
        )

    def test_a_humaneval_parent_gives_the_function_signature_and_typing_imports_only(self):
        code = (
            "from bisect import bisect_right\nfrom typing import List\n\n\n"
            "def has_close_elements(numbers: List[float], threshold: float) -> int:\n"
            "    return 0\n"
        )
        starter = prompts.starter_from_solution(
            code, "has_close_elements", "assert", "def has_close_elements(numbers, threshold):\n"
        )
        assert starter == (
            "from typing import List\n\n\n"
            "def has_close_elements(numbers: List[float], threshold: float) -> int:\n    "
        )

    def test_no_starter_without_a_parent_starter_or_for_stdin(self):
        code = "def f(x):\n    return x\n"
        assert prompts.starter_from_solution(code, "f", "assert", "") == ""
        assert prompts.starter_from_solution("print(1)\n", "", "stdio", "x") == ""
