"""LiveCodeBench's grading rules, written from the published grader to check our exports.

Follows ``lcb_runner/evaluation/testing_util.py`` (``run_test``, ``grade_call_based``,
``grade_stdio``) and how ``lcb_runner/benchmarks/code_generation.py`` turns a
``CodeGenerationProblem`` row into an evaluation sample (``get_evaluation_sample``), as
published in the LiveCodeBench/LiveCodeBench repository. Written from reading those files,
not copied. The rules it applies:

Loading a row (``CodeGenerationProblem.__post_init__``): ``platform`` and ``difficulty`` must
be members of LiveCodeBench's enums, ``contest_date`` must parse with
``datetime.fromisoformat``, ``public_test_cases`` is a JSON list, ``private_test_cases`` is a
JSON list or base64(zlib(pickle(JSON string))), ``metadata`` is a JSON object; every test is
``{"input", "output", "testtype"}`` with ``testtype`` in {stdin, functional}. The sample is
all public then all private tests, with ``fn_name = metadata.get("func_name")``; a sample
with ``fn_name`` is call-based, otherwise standard input.

Call-based: the program is prefixed with the grader's star-import prelude and executed as a
module; if the text contains ``class Solution``, ``Solution()`` is the object searched for
``fn_name``, else the module. Each test input is split on ``"\\n"`` and **every** piece is
``json.loads``-ed (so a trailing newline is a runtime error); the expected output is
``json.loads``-ed; the call's result, a tuple turned into a list, must be ``==`` the expected
value. The first failing test ends grading.

Standard input: a trailing ``if __name__ == '__main__':`` block is replaced by its body; the
imports are hoisted and every other top-level statement becomes the body of a function,
called once per test with ``sys.stdin`` replaced (``read()`` gives the whole input,
``readline()`` the next piece of ``input.split("\\n")`` without its newline, ``readlines()``
the pieces), ``open`` mocked to read the input, ``SystemExit`` swallowed and stdout
captured. Both texts are stripped and split on ``"\\n"``, each line stripped; the line counts
must match and each line must be equal, or else equal as lists of ``Decimal`` tokens.

Results per test: ``True``; ``-2`` wrong answer; ``-3`` time limit; ``-4`` runtime error.
Every sample is graded in a fresh child interpreter (the published grader uses a child
process too) so a program cannot disturb the next.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import json
import pickle
import subprocess
import sys
import zlib
from datetime import datetime
from decimal import Decimal, InvalidOperation

PLATFORMS = ("leetcode", "codeforces", "atcoder")
DIFFICULTIES = ("easy", "medium", "hard")
TESTTYPES = ("stdin", "functional")
ROW_FIELDS = (
    "question_title",
    "question_content",
    "platform",
    "question_id",
    "contest_id",
    "contest_date",
    "starter_code",
    "difficulty",
    "public_test_cases",
    "private_test_cases",
    "metadata",
)
# The modules the published grader star-imports (and imports by name) before a program.
_PRELUDE_MODULES = [
    *("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random"),
    *("statistics", "itertools", "functools", "operator", "io", "sys", "json", "builtins"),
    "typing",
]


def prelude() -> str:
    lines = [f"from {m} import *" for m in _PRELUDE_MODULES]
    lines += [f"import {m}" for m in _PRELUDE_MODULES if m not in ("builtins", "typing")]
    lines.append("sys.setrecursionlimit(50000)")
    return "\n".join(lines) + "\n"


class RowError(ValueError):
    """The row would not load as a ``CodeGenerationProblem``."""


def _tests(raw, field: str) -> list[dict]:
    if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
        raise RowError(f"{field}: not a list of tests")
    for t in raw:
        if set(t) != {"input", "output", "testtype"}:
            raise RowError(f"{field}: a test has fields {sorted(t)}")
        if t["testtype"] not in TESTTYPES:
            raise RowError(f"{field}: testtype {t['testtype']!r}")
    return raw


def load_row(row: dict) -> dict:
    """The row as LiveCodeBench's loader reads it; raises RowError where it would fail."""
    if set(row) != set(ROW_FIELDS):
        # The loader is ``CodeGenerationProblem(**row)``: any other key is a TypeError.
        raise RowError(f"fields {sorted(set(row) ^ set(ROW_FIELDS))} differ from the dataclass")
    if row["platform"] not in PLATFORMS:
        raise RowError(f"platform {row['platform']!r}")
    if row["difficulty"] not in DIFFICULTIES:
        raise RowError(f"difficulty {row['difficulty']!r}")
    try:
        datetime.fromisoformat(row["contest_date"])
    except (TypeError, ValueError) as exc:
        raise RowError(f"contest_date: {exc}") from exc
    public = _tests(json.loads(row["public_test_cases"]), "public_test_cases")
    try:
        private = json.loads(row["private_test_cases"])
    except ValueError:
        packed = base64.b64decode(row["private_test_cases"].encode("utf-8"))
        # Our own export, decoded to check it: trusted bytes.
        private = json.loads(pickle.loads(zlib.decompress(packed)))  # noqa: S301
    private = _tests(private, "private_test_cases")
    metadata = json.loads(row["metadata"])
    if not isinstance(metadata, dict):
        raise RowError("metadata: not an object")
    return {**row, "public": public, "private": private, "metadata": metadata}


def evaluation_sample(problem: dict) -> dict:
    tests = problem["public"] + problem["private"]
    return {
        "inputs": [t["input"] for t in tests],
        "outputs": [t["output"] for t in tests],
        "fn_name": problem["metadata"].get("func_name"),
    }


def grade(sample: dict, code: str, *, timeout: int = 6) -> list:
    """Per-test results for ``code`` on ``sample`` (``evaluation_sample``), graded in a child
    interpreter. A program the grader cannot even load gives ``[-4]``."""
    job = json.dumps({"sample": sample, "code": code, "timeout": timeout})
    limit = (timeout + 1) * max(1, len(sample["inputs"])) + 5
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tests.support.lcb_grading"],
            input=job,
            capture_output=True,
            text=True,
            timeout=limit,
        )
    except subprocess.TimeoutExpired:
        return [-1] * len(sample["inputs"])  # the grader's global time-out
    last = done.stdout.strip().splitlines()[-1:] or ["null"]
    results = json.loads(last[0])
    if results is None:
        raise RuntimeError(f"the grading child failed: {done.stderr[-2000:]}")
    return results


# --- what runs in the child ---------------------------------------------------------------


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def _load(code: str, timeout: int):
    import signal
    import types

    signal.alarm(timeout)
    try:
        module = types.ModuleType("tmp_sol")
        exec(code, module.__dict__)
        return module.Solution() if "class Solution" in code else module
    finally:
        signal.alarm(0)


def _failure(exc: BaseException) -> int:
    return -3 if isinstance(exc, _Timeout) else -4


def _call_based(code: str, sample: dict, timeout: int) -> list:
    import signal

    target = _load(prelude() + "\n\n" + code, timeout)
    method = getattr(target, sample["fn_name"], None)
    if method is None:
        return [-4]
    results: list = []
    for raw_in, raw_out in zip(sample["inputs"], sample["outputs"], strict=True):
        try:
            args = [json.loads(piece) for piece in raw_in.split("\n")]
            expected = json.loads(raw_out)
            signal.alarm(timeout)
            try:
                got = method(*args)
            finally:
                signal.alarm(0)
        except BaseException as exc:  # the grader catches everything here
            results.append(_failure(exc))
            return results
        if isinstance(got, tuple):
            got = list(got)
        results.append(got == expected)
        if got != expected:
            return results
    return results


def _unwrap_main(code: str) -> str:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
        return ast.unparse(tree.body[:-1]) + "\n" + ast.unparse(last.body)
    return code


def _as_function(code: str) -> str:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    imports = [s for s in tree.body if isinstance(s, ast.Import | ast.ImportFrom)]
    rest = [s for s in tree.body if not isinstance(s, ast.Import | ast.ImportFrom)]
    function = ast.FunctionDef(
        name="wrapped_function",
        args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=rest or [ast.Pass()],
        decorator_list=[],
        type_params=[],
        lineno=1,
    )
    return prelude() + "\n" + ast.unparse(imports) + "\n" + ast.unparse(function)


class _Stdin:
    """``sys.stdin`` as the grader mocks it."""

    def __init__(self, text: str):
        import io

        self._text = text
        self._pieces = iter(text.split("\n"))
        self._io = io.StringIO(text)
        self.buffer = io.BytesIO(text.encode())

    def read(self, *args):
        return self._text

    def readline(self, *args):
        return next(self._pieces)

    def readlines(self, *args):
        return self._text.split("\n")

    def __iter__(self):
        return iter(self._io)

    def __getattr__(self, name):
        return getattr(self._io, name)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(token) for token in line.split()]
    except (InvalidOperation, ValueError):
        return None


def _same_output(got: str, expected: str) -> bool:
    got_lines, expected_lines = _lines(got), _lines(expected)
    if len(got_lines) != len(expected_lines):
        return False
    for a, b in zip(got_lines, expected_lines, strict=True):
        if a == b:
            continue
        da, db = _decimals(a), _decimals(b)
        if da is None or db is None or da != db:
            return False
    return True


def _stdio(code: str, sample: dict, timeout: int) -> list:
    import builtins
    import io
    import signal
    from unittest import mock

    module = _load(_as_function(_unwrap_main(code)), timeout)
    method = getattr(module, "wrapped_function", None)
    if method is None:
        return [-4]
    results: list = []
    for raw_in, raw_out in zip(sample["inputs"], sample["outputs"], strict=True):
        captured = io.StringIO()
        real_stdout, real_stdin = sys.stdout, sys.stdin
        sys.stdout, sys.stdin = captured, _Stdin(raw_in)
        signal.alarm(timeout)
        try:
            with (
                mock.patch.object(builtins, "open", mock.mock_open(read_data=raw_in)),
                contextlib.suppress(SystemExit),
            ):
                method()
        except BaseException as exc:
            signal.alarm(0)
            sys.stdout, sys.stdin = real_stdout, real_stdin
            results.append(_failure(exc))
            return results
        finally:
            signal.alarm(0)
            sys.stdout, sys.stdin = real_stdout, real_stdin
        if not _same_output(captured.getvalue(), raw_out):
            results.append(-2)
            return results
        results.append(True)
    return results


def _child() -> None:
    import os
    import signal

    job = json.loads(sys.stdin.read())
    signal.signal(signal.SIGALRM, _alarm)
    sample, code, timeout = job["sample"], job["code"], job["timeout"]
    out = os.fdopen(os.dup(1), "w")
    try:
        if sample.get("fn_name"):
            results = _call_based(code, sample, timeout)
        else:
            results = _stdio(code, sample, timeout)
    except BaseException:
        # "Error during testing": the program did not even load.
        results = [-4]
    out.write("\n" + json.dumps(results) + "\n")
    out.flush()


if __name__ == "__main__":
    _child()
