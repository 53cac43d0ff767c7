"""The baseline of the judge benchmarks: an in-process, UNISOLATED harness that works the way
LiveCodeBench's does.

Written for this benchmark from LiveCodeBench's published approach (``lcb_runner/evaluation/
testing_util.py`` ``run_test`` / ``grade_stdio`` / ``grade_call_based``, and
``compute_code_generation_metrics.check_correctness``); it is not their code. Like theirs:

- per submission, one ``multiprocessing.Process`` with a ``Manager`` list for the results, joined
  with a timeout of ``(timeout + 1) * tests + 5`` s (``check_correctness``);
- in it, the code is compiled ONCE into a fresh module after LiveCodeBench's import prelude
  (stdin/stdout programs first have their top-level statements wrapped into
  ``wrapped_function``, imports kept at module level, as their ``make_function`` does);
- per test: ``signal.alarm(timeout)``, ``faulthandler.enable()``; stdin patched with
  ``unittest.mock`` (``builtins.open``, ``sys.stdin`` replaced by a stand-in with a ``buffer``,
  and its ``read``, ``readline`` and ``readlines``), stdout captured in a ``StringIO``;
  call-based: every test's JSON arguments parsed up front, ``method(*args)``, tuples as lists,
  compared by ``==``; the first failing test ends the submission.

Left out: their ``reliability_guard`` (it disables destructive functions once per process and
costs nothing per test) and ``clean_if_name`` (the benchmark programs have no main guard).
Output comparison is the judge's ``compare_stdio``, which reproduces LiveCodeBench's
``grade_stdio`` rule, so both sides pay the same comparison.
"""

from __future__ import annotations

import ast
import faulthandler
import io
import json
import multiprocessing
import signal
import sys
from io import StringIO
from types import ModuleType
from unittest.mock import mock_open, patch

from evolution.sandbox.compare import compare_stdio
from evolution.sandbox.inside.protocol import LCB_PRELUDE


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def _wrap_stdio(code: str) -> str:
    tree = ast.parse(code)
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    body = [n for n in tree.body if not isinstance(n, ast.Import | ast.ImportFrom)]
    function = ast.FunctionDef(
        name="wrapped_function",
        args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=body or [ast.Pass()],
        decorator_list=[],
        lineno=1,
    )
    return LCB_PRELUDE + "\n" + ast.unparse(ast.Module(body=[*imports, function], type_ignores=[]))


def _module(code: str) -> ModuleType:
    module = ModuleType("tmp_sol", "")
    exec(code, module.__dict__)  # noqa: S102 - the baseline is unisolated by definition
    return module


class _Stdin(io.StringIO):
    """Standard input with a bytes ``buffer``, for programs that read ``sys.stdin.buffer``."""

    def __init__(self, text: str):
        super().__init__(text)
        self.buffer = io.BytesIO(text.encode())


def _call_stdio(method, text: str) -> str:
    lines = iter(text.split("\n"))
    captured = StringIO()
    with (
        patch("builtins.open", mock_open(read_data=text)),
        patch("sys.stdin", _Stdin(text)),
        patch("sys.stdin.readline", lambda *args: next(lines)),
        patch("sys.stdin.readlines", lambda *args: text.split("\n")),
        patch("sys.stdin.read", lambda *args: text),
    ):
        saved, sys.stdout = sys.stdout, captured
        try:
            method()
        except SystemExit:
            pass
        finally:
            sys.stdout = saved
    return captured.getvalue()


def run_tests(code: str, tests: list, harness: str, entry_point: str, timeout: int) -> list:
    """In the current process: one bool per test run, stopping at the first failure."""
    signal.signal(signal.SIGALRM, _alarm)
    results: list[bool] = []
    try:
        if harness == "stdio":
            method = _module(_wrap_stdio(code)).wrapped_function
        else:
            module = _module(LCB_PRELUDE + code)
            target = module.Solution() if "class Solution" in code else module
            method = getattr(target, entry_point)
    except BaseException:
        return [False]
    if harness != "stdio":
        tests = [([json.loads(line) for line in i.split("\n")], json.loads(o)) for i, o in tests]
    for given, expected in tests:
        signal.alarm(timeout)
        faulthandler.enable()
        try:
            if harness == "stdio":
                ok = compare_stdio(_call_stdio(method, given), expected)[0]
            else:
                value = method(*given)
                if isinstance(value, tuple):
                    value = list(value)
                ok = value == expected
        except BaseException:
            ok = False
        finally:
            signal.alarm(0)
            faulthandler.disable()
        results.append(ok)
        if not ok:
            break
    return results


def _child(code, tests, harness, entry_point, timeout, shared):
    shared.extend(run_tests(code, tests, harness, entry_point, timeout))


def check_correctness(
    code: str, tests: list, *, harness: str = "stdio", entry_point: str = "", timeout: int = 6
) -> list:
    """One submission in its own process, as LiveCodeBench's ``check_correctness`` runs it."""
    with multiprocessing.Manager() as manager:
        shared = manager.list()
        process = multiprocessing.Process(
            target=_child, args=(code, tests, harness, entry_point, timeout, shared)
        )
        process.start()
        process.join(timeout=(timeout + 1) * len(tests) + 5)
        if process.is_alive():
            process.kill()
        return list(shared)
