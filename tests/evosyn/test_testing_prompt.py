"""Figure 6's prompt with its {examples} block: the document's text (Problem 1 with start code,
Problem 2 without, Problem 3 generating a long input with Python code for eval()) and three
examples written for BenchForge, labelled so in the template. Every example's unit tests are
checked in the sandbox against a correct solution: a wrong example would teach wrong tests."""

from __future__ import annotations

import re

import pytest

from evolution import sandbox
from evosyn.engine import prompts as P

LIMITS = sandbox.Limits(time_s=10, memory_mb=512)

SOLUTIONS = {
    "1": (
        "function",
        "max_window_sum",
        "def max_window_sum(nums, k):\n"
        "    best = window = sum(nums[:k])\n"
        "    for i in range(k, len(nums)):\n"
        "        window += nums[i] - nums[i - k]\n"
        "        best = max(best, window)\n"
        "    return best\n",
    ),
    "2": (
        "stdio",
        "",
        "input()\nprint('Yes' if all(int(a) % 2 == 0 for a in input().split()) else 'No')\n",
    ),
    "3": (
        "function",
        "count_distinct",
        "def count_distinct(values):\n    return len(set(values))\n",
    ),
}


def _examples() -> dict[str, str]:
    """{problem number: the text of its example} from the template's examples block."""
    body = P.load("testing").body
    block = body[body.index("## Problem 1") : body.index("$format")]
    parts = re.split(r"^## Problem (\d)\n", block, flags=re.M)[1:]
    return dict(zip(parts[::2], parts[1::2], strict=True))


def test_the_prompt_is_figure_6_with_its_examples_block():
    template = P.load("testing")
    assert template.version == "4" and template.role == "test_writer"
    for entry_point in ("has_close_elements", ""):
        messages, _ = P.testing_messages(statement="STATEMENT", entry_point=entry_point)
        text = messages[0]["content"]
        # The document's sentences that point at the examples, and the examples they point at.
        assert "generate the input like Problem 3, the python code must can be process" in text
        assert "strictly in accordance with the signature of the function, like Problem 1" in text
        assert "your input and output should be a string, like Problem 2" in text
        assert "here are some examples of good unit tests:" in text
        positions = [text.index(f"## Problem {n}\n") for n in (1, 2, 3)]
        assert positions == sorted(positions)
        assert positions[-1] < text.index("Now please generate the unit tests for the problem.")
        assert text.rstrip().endswith("## Problem\nSTATEMENT")
    assert set(_examples()) == {"1", "2", "3"}


def test_the_examples_are_labelled_as_benchforges_own():
    head = (P.PROMPT_DIR / "testing.md").read_text(encoding="utf-8").split("\n---\n", 1)[0]
    (label,) = [line for line in head.splitlines() if line.startswith("examples:")]
    assert "BenchForge's own" in label and "the document prints none" in label
    # Problem 2 is the document's Appendix A.4 problem, said so.
    assert "Appendix A.4" in label
    assert "Determine whether all elements in A are even numbers." in _examples()["2"]


@pytest.mark.parametrize("number", ["1", "2", "3"])
def test_every_examples_unit_tests_pass_a_correct_solution_in_the_sandbox(number):
    harness, entry_point, solution = SOLUTIONS[number]
    example = _examples()[number]
    tests = P.parse_tests(example, harness=harness)
    assert len(tests) == 5
    specs = []
    for test in tests:
        given = test["input"]
        if test["input_expr"]:
            # Problem 3's long inputs: the code is evaluated in the sandbox, as the execute
            # stage does (EVALUATE_INPUT).
            (outcome,) = sandbox.run_batch(
                P.EVALUATE_INPUT, [test["input_expr"]], harness="stdio", limits=LIMITS
            )
            assert outcome.status == "OK", outcome.stderr
            given = P.evaluated_input(outcome.stdout, harness=harness)
            assert given is not None and len(given) > 100_000
        specs.append(sandbox.TestSpec(input=given, output=test["output"]))
    expressions = [t["input_expr"] for t in tests if t["input_expr"]]
    assert len(expressions) == (2 if number == "3" else 0)
    result = sandbox.judge(solution, specs, harness=harness, limits=LIMITS, entry_point=entry_point)
    assert [t.verdict for t in result.tests] == ["AC"] * 5, result.to_dict()
