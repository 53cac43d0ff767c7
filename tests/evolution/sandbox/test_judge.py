"""judge() and run_batch() through the real bwrap backend: harnesses, verdicts, options."""

from __future__ import annotations

import json

import pytest

from evolution.sandbox import Limits, TestSpec, judge, run_batch
from evolution.sandbox.backends.unsafe import UnsafeBackend
from evolution.sandbox.types import SandboxUnavailable

SUM = "a, b = map(int, input().split())\nprint(a + b)"


def test_stdio_program_is_ac_on_correct_outputs(backend, limits):
    result = judge(
        SUM,
        [TestSpec("1 2\n", "3\n"), TestSpec("5 6", "11")],
        harness="stdio",
        limits=limits,
        backend=backend,
    )
    assert (result.verdict, result.passed, result.total) == ("AC", 2, 2)
    assert all(t.time_ms > 0 and t.cpu_ms > 0 and t.memory_kb for t in result.tests)


def test_first_failure_carries_a_diff_and_the_verdict(backend, limits):
    result = judge(
        SUM,
        [TestSpec("1 2", "3"), TestSpec("1 1", "3"), TestSpec("2 2", "5")],
        harness="stdio",
        limits=limits,
        backend=backend,
    )
    assert result.verdict == "WA"
    assert [t.verdict for t in result.tests] == ["AC", "WA", "WA"]
    assert "'2' != '3'" in result.tests[1].diff
    assert result.tests[2].diff == ""  # only the first failure is explained


def test_stop_on_first_failure_runs_no_further_tests(backend, limits):
    result = judge(
        SUM,
        [TestSpec("1 2", "3"), TestSpec("1 1", "3"), TestSpec("2 2", "4")],
        harness="stdio",
        limits=limits,
        backend=backend,
        stop_on_first_failure=True,
    )
    assert [t.verdict for t in result.tests] == ["AC", "WA"]
    assert (result.passed, result.total) == (1, 3)


def test_main_guard_and_prelude_names_work_like_livecodebench(backend, limits):
    code = "def main():\n    print(gcd(int(input()), 6))\nif __name__ == '__main__':\n    main()"
    assert (
        judge(code, [TestSpec("4", "2")], harness="stdio", limits=limits, backend=backend).verdict
        == "AC"
    )


def test_every_test_gets_a_fresh_process(backend, limits):
    code = (
        "import os\nseen = os.path.exists('mark')\nopen('mark', 'w').close()\n"
        "import collections\ncollections.hits = getattr(collections, 'hits', 0) + 1\n"
        "print(seen, collections.hits)"
    )
    outcomes = run_batch(code, ["", "", ""], harness="stdio", limits=limits, backend=backend)
    assert [o.stdout for o in outcomes] == ["False 1\n"] * 3


def test_function_harness_calls_solution_methods_with_json_arguments(backend, limits):
    code = (
        "class Solution:\n"
        "    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
        "        seen = {}\n"
        "        for i, x in enumerate(nums):\n"
        "            if target - x in seen:\n"
        "                return (seen[target - x], i)\n"
        "            seen[x] = i\n"
    )
    result = judge(
        code,
        [TestSpec("[2,7,11,15]\n9", "[0, 1]"), TestSpec("[3,2,4]\n6", "[1,2]")],
        harness="function",
        entry_point="twoSum",
        limits=limits,
        backend=backend,
    )
    assert result.verdict == "AC", result.to_dict()  # the tuple counts as a list, as in LCB


def test_function_harness_plain_function_and_wrong_answer(backend, limits):
    result = judge(
        "def double(x):\n    return x * 2",
        [TestSpec("3", "6"), TestSpec('"ab"', '"abab"'), TestSpec("1", "3")],
        harness="function",
        entry_point="double",
        limits=limits,
        backend=backend,
    )
    assert [t.verdict for t in result.tests] == ["AC", "AC", "WA"]
    assert "returned 2 expected 3" in result.tests[2].diff


def test_function_harness_requires_entry_point_and_json_outputs(limits):
    with pytest.raises(ValueError, match="entry_point"):
        judge("x=1", [TestSpec("1", "1")], harness="function", limits=limits)
    with pytest.raises(ValueError, match="not JSON"):
        judge("x=1", [TestSpec("1", "nope")], harness="function", entry_point="f", limits=limits)
    with pytest.raises(ValueError, match="harness"):
        judge("x=1", [TestSpec("1", "1")], harness="shell", limits=limits)


def test_assert_harness_tells_wrong_answers_from_crashes(backend, limits):
    tests = [TestSpec("def check(candidate):\n    assert candidate(2, 3) == 5\n")]
    verdicts = [
        judge(
            code, tests, harness="assert", entry_point="add", limits=limits, backend=backend
        ).verdict
        for code in (
            "def add(a, b):\n    return a + b",
            "def add(a, b):\n    return a - b",
            "def add(a, b):\n    return undefined_name",
            "def plus(a, b):\n    return a + b",
        )
    ]
    assert verdicts == ["AC", "WA", "RE", "RE"]


def test_code_that_does_not_compile_is_ce(backend, limits):
    result = judge("def f(:\n", [TestSpec("", "")], harness="stdio", limits=limits, backend=backend)
    assert result.verdict == "CE"
    assert "SyntaxError" in result.compile_error
    outcomes = run_batch("x = (", ["", ""], harness="stdio", limits=limits, backend=backend)
    assert [o.status for o in outcomes] == ["CE", "CE"]


def test_nonzero_exit_is_re_and_sys_exit_zero_is_fine(backend, limits):
    outcomes = run_batch(
        "import sys\nprint('x')\nsys.exit(int(input()))",
        ["0", "3"],
        harness="stdio",
        limits=limits,
        backend=backend,
    )
    assert [(o.status, o.exit_code, o.stdout) for o in outcomes] == [
        ("OK", 0, "x\n"),
        ("RE", 3, "x\n"),
    ]


def test_run_batch_passes_argv_to_generators(backend, limits):
    generator = "import random, sys\nrandom.seed(int(sys.argv[2]))\nprint(random.randint(1, 10**9))"
    first = run_batch(
        generator, [""], harness="stdio", limits=limits, argv=["--seed", "42"], backend=backend
    )
    again = run_batch(
        generator, [""], harness="stdio", limits=limits, argv=["--seed", "42"], backend=backend
    )
    other = run_batch(
        generator, [""], harness="stdio", limits=limits, argv=["--seed", "43"], backend=backend
    )
    assert first[0].status == "OK"
    assert first[0].stdout == again[0].stdout != other[0].stdout


def test_run_batch_function_harness_returns_json(backend, limits):
    outcomes = run_batch(
        "def f(xs):\n    return sorted(set(xs))",
        ["[3,1,3]", "[]"],
        harness="function",
        entry_point="f",
        limits=limits,
        backend=backend,
    )
    assert [json.loads(o.stdout) for o in outcomes] == [[1, 3], []]


def test_many_tests_are_sharded_and_come_back_in_order(backend, limits):
    tests = [TestSpec(str(i), str(i * i)) for i in range(150)]
    result = judge(
        "n = int(input())\nprint(n * n)", tests, harness="stdio", limits=limits, backend=backend
    )
    assert (result.verdict, result.passed, len(result.tests)) == ("AC", 150, 150)
    wrong = judge(
        "n = int(input())\nprint(n * n + (n == 120))",
        tests,
        harness="stdio",
        limits=limits,
        backend=backend,
    )
    assert [i for i, t in enumerate(wrong.tests) if t.verdict != "AC"] == [120]


def test_float_comparison_option(backend, limits):
    tests = [TestSpec("", "0.3333333")]
    code = "print(1/3)"
    assert judge(code, tests, harness="stdio", limits=limits, backend=backend).verdict == "WA"
    assert (
        judge(
            code,
            tests,
            harness="stdio",
            limits=limits,
            backend=backend,
            comparison={"mode": "float"},
        ).verdict
        == "AC"
    )


def test_checker_program_accepts_any_valid_answer(backend, limits):
    checker = (
        "import json, sys\n"
        "doc = json.load(sys.stdin)\n"
        "n = int(doc['input'])\n"
        "a, b = map(int, doc['actual'].split())\n"
        "print('AC' if a + b == n and a >= 0 and b >= 0 else 'WA sum is wrong')\n"
    )
    tests = [TestSpec("10", "5 5"), TestSpec("7", "3 4")]
    good = judge(
        "n = int(input())\nprint(n, 0)",
        tests,
        harness="stdio",
        limits=limits,
        backend=backend,
        comparison={"checker": checker},
    )
    bad = judge(
        "n = int(input())\nprint(n, 1)",
        tests,
        harness="stdio",
        limits=limits,
        backend=backend,
        comparison={"checker": checker},
    )
    broken = judge(
        "print(1, 2)",
        tests,
        harness="stdio",
        limits=limits,
        backend=backend,
        comparison={"checker": "raise SystemExit(3)"},
    )
    assert good.verdict == "AC"
    assert bad.verdict == "WA" and "sum is wrong" in bad.tests[0].diff
    assert broken.verdict == "SE"  # a broken checker is never blamed on the solution


def test_sandbox_failure_is_se_not_blamed_on_the_solution(limits):
    class Broken:
        name = "broken"

        def open(self, *, limits):
            from evolution.sandbox.types import SandboxError

            raise SandboxError("no namespaces today")

    result = judge(
        "print(1)", [TestSpec("", "1")], harness="stdio", limits=limits, backend=Broken()
    )
    assert result.verdict == "SE"
    assert "no namespaces today" in result.tests[0].diff


def test_unsafe_backend_is_refused_unless_explicitly_allowed(settings, limits):
    settings.SANDBOX_ALLOW_UNSAFE = False
    with pytest.raises(SandboxUnavailable, match="SANDBOX_ALLOW_UNSAFE"):
        UnsafeBackend()
    settings.SANDBOX_BACKEND = "unsafe"
    result = judge("print(1)", [TestSpec("", "1")], harness="stdio", limits=limits)
    assert result.verdict == "SE"  # refused, and never silently replaced by another backend


def test_unsafe_backend_runs_when_allowed(limits):
    backend = UnsafeBackend(allow=True)
    result = judge(
        SUM,
        [TestSpec("1 2", "3"), TestSpec("2 2", "5")],
        harness="stdio",
        limits=limits,
        backend=backend,
    )
    assert [t.verdict for t in result.tests] == ["AC", "WA"]
    sleeper = run_batch(
        "import time\ntime.sleep(30)",
        [""],
        harness="stdio",
        limits=Limits(time_s=0.5),
        backend=backend,
    )
    assert sleeper[0].status == "TLE"


def test_missing_bwrap_is_unavailable_not_a_fallback(settings, monkeypatch, tmp_path):
    from evolution.sandbox.backends.bwrap import BwrapBackend

    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH without bwrap on it
    settings.SANDBOX_ALLOW_UNSAFE = True
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        BwrapBackend()


def test_each_test_gets_its_own_random_state(backend, limits):
    outcomes = run_batch(
        "import random\nprint(random.random())",
        ["", "", ""],
        harness="stdio",
        limits=limits,
        backend=backend,
    )
    assert len({o.stdout for o in outcomes}) == 3


def test_stopping_early_leaves_the_warm_sandbox_reusable(backend, limits):
    tests = [TestSpec("1 1", "3"), TestSpec("1 2", "3")]
    bad = judge(
        SUM, tests, harness="stdio", limits=limits, backend=backend, stop_on_first_failure=True
    )
    assert [t.verdict for t in bad.tests] == ["WA"]
    idle_before = list(backend._idle)
    assert idle_before, "the sandbox went back to the pool after a clean early stop"
    ce = judge(
        "x = (", tests, harness="stdio", limits=limits, backend=backend, stop_on_first_failure=True
    )
    assert ce.verdict == "CE"
    good = judge(
        SUM,
        [TestSpec("1 2", "3")] * 3,
        harness="stdio",
        limits=limits,
        backend=backend,
        stop_on_first_failure=True,
    )
    assert (good.verdict, good.passed) == ("AC", 3)
