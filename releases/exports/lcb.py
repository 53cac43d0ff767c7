"""LiveCodeBench's ``CodeGenerationProblem`` rows and its custom-evaluator solutions file, and
the items it cannot grade faithfully with the reason."""

from __future__ import annotations

import ast
import base64
import copy
import json
import pickle
import zlib
from collections.abc import Iterator

from evolution.sandbox import scoring

from ..models import Release, ReleaseItem
from .rows import dump_line, item_tests, release_items, split_tests

LCB_PICKLE_PROTOCOL = 4
_LCB_DIFFICULTIES = ("easy", "medium", "hard")
_LCB_PLATFORMS = ("leetcode", "codeforces", "atcoder")


def lcb_pack_private(tests: list[dict]) -> str:
    """LiveCodeBench's packed form of private tests."""
    text = json.dumps(tests)
    return base64.b64encode(
        zlib.compress(pickle.dumps(text, protocol=LCB_PICKLE_PROTOCOL), 9)
    ).decode("ascii")


def lcb_function_input(text: str) -> str:
    """A call-based test input as LiveCodeBench stores it: one JSON value per argument,
    newline-joined, no trailing newline. Its grader splits on every newline and parses each
    piece, so a trailing newline or a blank line would be a runtime error on every test."""
    return "\n".join(json.dumps(json.loads(line)) for line in text.split("\n") if line.strip())


def lcb_function_output(text: str) -> str:
    """The expected return value as one JSON document (compared with ``==`` after parsing)."""
    return json.dumps(json.loads(text))


def _lcb_exclusion(record: dict, item: ReleaseItem | None = None) -> str | None:
    """Why LiveCodeBench cannot grade this item faithfully, or None."""
    if record["harness"] not in ("stdio", "function"):
        return "assertion-program harness: LiveCodeBench knows stdin and functional tests only"
    comparison = record.get("comparison") or {}
    if scoring.is_scored(comparison):
        return "scored (open-ended) problem: LiveCodeBench grades pass/fail only"
    mode = comparison.get("mode") or "exact"
    if mode != "exact" or comparison.get("checker"):
        # Its stdin grader compares tokens as exact Decimals and its call-based grader with
        # ``==``: a tolerance, an order-free comparison or a checker would misgrade.
        return f"comparison {mode!r}{' with a checker' if comparison.get('checker') else ''}"
    if item is not None and record["harness"] == "function":
        for test in item_tests(item):
            try:
                lcb_function_input(test["input"])
                lcb_function_output(test["output"])
            except ValueError:
                return f"test {test['tier']}/{test['ordinal']} is not one JSON value per line"
    return None


def _signature(code: str, name: str) -> str | None:
    """The parameter list (annotations kept) of function ``name`` defined in ``code``."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            args = node.args
            if args.args and args.args[0].arg == "self":
                args = copy.copy(args)
                args.args = args.args[1:]
            returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
            return f"({ast.unparse(args)}){returns}"
    return None


def lcb_starter_code(record: dict) -> str:
    """LeetCode-style starter code: ``class Solution`` with the method ``func_name``.

    LiveCodeBench's call-based grader instantiates ``Solution`` when the program defines it,
    and its prompts ask for the starter code completed, so a call-based row must carry one."""
    starter = record.get("starter_code") or ""
    if "class Solution" in starter:
        return starter
    name = record["entry_point"]
    signature = (
        _signature(starter, name)
        or _signature(record.get("reference_solution") or "", name)
        or "(*args)"
    )
    params = "(self" + (signature[1:] if signature.startswith("()") else ", " + signature[1:])
    return f"class Solution:\n    def {name}{params}:\n        "


def lcb_solution_code(record: dict) -> str:
    """The reference solution in the form LiveCodeBench grades.

    A stdin program is kept as is. A call-based module keeps its functions and gains a
    ``class Solution`` whose method delegates to the module's function of the same name:
    the grader runs the whole program, then calls ``Solution().<func_name>(*args)``."""
    code = record.get("reference_solution") or ""
    if record["harness"] != "function" or "class Solution" in code:
        return code
    name = record["entry_point"]
    return (
        code.rstrip("\n")
        + "\n\n\nclass Solution:\n"
        + f"    def {name}(self, *args, **kwargs):\n"
        + f"        return {name}(*args, **kwargs)\n"
    )


def lcb_record(item: ReleaseItem, release: Release) -> dict | None:
    """The item as a ``CodeGenerationProblem`` row, or None when LiveCodeBench cannot grade
    it (``lcb_skipped`` says why)."""
    record = item.record
    if _lcb_exclusion(record, item) is not None:
        return None
    harness = record["harness"]
    testtype = "stdin" if harness == "stdio" else "functional"
    public, hidden = split_tests(item)
    meta = record.get("metadata") or {}
    platform = meta.get("platform") if meta.get("platform") in _LCB_PLATFORMS else None
    # LiveCodeBench builds a LeetCode-style prompt for call-based problems.
    platform = platform or ("leetcode" if harness == "function" else "atcoder")
    difficulty = (item.difficulty or "").lower()
    when = item.created_on or release.frozen_at
    if harness == "function":
        lcb_meta = {"func_name": record["entry_point"]}
        starter = lcb_starter_code(record)

        def encode(t):
            return {
                "input": lcb_function_input(t["input"]),
                "output": lcb_function_output(t["output"]),
                "testtype": testtype,
            }
    else:
        lcb_meta, starter = {}, record.get("starter_code", "")

        def encode(t):
            return {"input": t["input"], "output": t["output"], "testtype": testtype}

    return {
        "question_title": record["title"],
        "question_content": record["statement"],
        "platform": platform,
        "question_id": item.public_id,
        "contest_id": f"{release.benchmark.slug}-v{release.version}",
        "contest_date": when.isoformat() if when else None,
        "starter_code": starter,
        "difficulty": difficulty if difficulty in _LCB_DIFFICULTIES else "hard",
        "public_test_cases": json.dumps([encode(t) for t in public]),
        "private_test_cases": lcb_pack_private([encode(t) for t in hidden]),
        "metadata": json.dumps(lcb_meta),
    }


def export_lcb(release: Release) -> Iterator[str]:
    for item in release_items(release):
        row = lcb_record(item, release)
        if row is not None:
            yield dump_line(row)


def export_lcb_solutions(release: Release) -> bytes:
    """The reference solutions as LiveCodeBench's custom-evaluator output file
    (``--custom_output_file``): a JSON list of ``{"question_id", "code_list"}``, one entry per
    row of the ``lcb`` export (items without a reference have an empty ``code_list``)."""
    rows = [
        {"question_id": item.public_id, "code_list": [lcb_solution_code(item.record)]}
        if item.record.get("reference_solution")
        else {"question_id": item.public_id, "code_list": []}
        for item in release_items(release)
        if _lcb_exclusion(item.record, item) is None
    ]
    return (json.dumps(rows, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def lcb_skipped(release: Release) -> list[str]:
    """Public ids of the items left out of the ``lcb`` export."""
    return [i.public_id for i in release_items(release) if _lcb_exclusion(i.record, i) is not None]


def lcb_skipped_reasons(release: Release) -> dict[str, str]:
    return {
        i.public_id: reason
        for i in release_items(release)
        if (reason := _lcb_exclusion(i.record, i)) is not None
    }
