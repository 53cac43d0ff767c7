"""LiveCodeBench's grading rules as ``tests/support/lcb_grading`` applies them, and the export's
encoding of function inputs and outputs. The demo release's export graded by these rules is in
tests/test_demo_database.py (the demo database is built once for all its readers)."""

from __future__ import annotations

from releases.exports import lcb
from tests.support import lcb_grading


def test_stdin_grading_follows_the_published_comparison():
    sample = {"inputs": ["3\n1 2 3\n"], "outputs": ["6.0\n"], "fn_name": None}
    # Token-wise Decimal equality: 6 equals 6.0; extra blank lines at the end are stripped.
    assert lcb_grading.grade(
        sample, "n=int(input())\nprint(sum(map(int,input().split())))\n\n"
    ) == [True]
    main = "def main():\n    print(6)\n\nif __name__ == '__main__':\n    main()\n"
    assert lcb_grading.grade(sample, main) == [True]
    assert lcb_grading.grade(sample, "print(6)\nprint(7)\n") == [-2]
    assert lcb_grading.grade(sample, "raise ValueError('x')\n") == [-4]


def test_function_inputs_are_encoded_as_livecodebench_stores_them():
    assert lcb.lcb_function_input("[1.0, 2.0]\n1.5\n") == "[1.0, 2.0]\n1.5"
    assert lcb.lcb_function_input('["a","b"]\n\n') == '["a", "b"]'
    assert lcb.lcb_function_output("3\n") == "3"
    record = {
        "harness": "function",
        "entry_point": "count",
        "starter_code": "",
        "reference_solution": "def count(xs: list[int], t: float) -> int:\n    return 0\n",
    }
    assert lcb.lcb_starter_code(record) == (
        "class Solution:\n    def count(self, xs: list[int], t: float) -> int:\n        "
    )
