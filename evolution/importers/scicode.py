"""SciCode (``SciCode1/SciCode``) rows as function-level seed records, one per sub-step.

A row (``problems_dev.jsonl`` / ``problems_test.jsonl`` as the Hub serves them) is one main
problem: ``problem_id``, ``problem_name``, ``problem_description_main``, ``problem_io``,
``required_dependencies`` (import lines), ``general_tests`` and ``sub_steps``, each with
``step_number`` ("77.1"), ``step_description_prompt``, ``step_background``,
``function_header``, ``return_line``, ``test_cases`` (Python snippets ending in an
assertion against ``target``) and, in the dev split, ``ground_truth_code``.

SciCode keeps each test's ``target`` outside the rows (its ``test_data.h5``), computed from the
gold solutions. So a step imports when it has ``ground_truth_code``: each test case becomes an
``assert``-harness test program whose ``check(candidate)`` first computes ``target`` by running
the case's setup and the value compared with ``target`` against the gold code, then runs the
case as published against the candidate. Steps without gold code (the test split withholds
it) are counted as skipped. Earlier steps' gold code is part of every test program, as in
SciCode's evaluation with gold previous steps, since later steps call earlier functions.

Nothing of a row is executed at import: test cases are only parsed (``ast.parse``) to find
the compared value; the code runs later, in the sandbox.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from .errors import Skipped
from .reading import Fields
from .rows import iter_rows, seed_record

DATASET = "scicode"
_HEADER_NAME = re.compile(r"\b(?:def|class)\s+(\w+)\s*[(:]")


def read_scicode(
    *, path: str | None = None, content: str | None = None
) -> Iterator[tuple[int, dict | Skipped]]:
    for line, row in iter_rows(path=path, content=content):
        yield from ((line, record) for record in scicode_records(row, line=line))


def _compared_value(case: str, *, fields: Fields, key: str) -> tuple[str, str]:
    """(setup code, expression compared with ``target``) of a published test case."""
    try:
        tree = ast.parse(case)
    except SyntaxError as exc:
        fields.fail(key, f"is not Python: {exc.msg} (line {exc.lineno})")
    if not tree.body or not isinstance(tree.body[-1], ast.Assert):
        fields.fail(key, "must end with an assert against target")
    test = tree.body[-1].test
    value = None
    if isinstance(test, ast.Call):
        others = [a for a in test.args if not (isinstance(a, ast.Name) and a.id == "target")]
        if len(others) < len(test.args) and others:
            value = others[0]
    elif isinstance(test, ast.Compare) and len(test.comparators) == 1:
        left, right = test.left, test.comparators[0]
        if isinstance(right, ast.Name) and right.id == "target":
            value = left
        elif isinstance(left, ast.Name) and left.id == "target":
            value = right
    if value is None:
        fields.fail(key, "the final assert does not compare one value with target")
    return ast.unparse(tree.body[:-1]), ast.unparse(value)


def _test_program(*, dependencies: str, prior: str, gold: str, case: str, setup: str, value: str):
    """A test program for the ``assert`` harness (it defines ``check(candidate)``)."""
    reference = "\n\n".join(part for part in (dependencies, prior, gold) if part.strip())
    return (
        f"{dependencies}\n\n"
        "# Earlier steps' gold functions, which this step may call.\n"
        f"{prior}\n\n"
        f"_REFERENCE = {reference!r}\n"
        f"_SETUP = {setup!r}\n"
        f"_VALUE = {value!r}\n"
        f"_CASE = {case!r}\n\n\n"
        "def check(candidate):\n"
        "    # target: the compared value computed by the gold solution on the same setup.\n"
        "    gold = {'__name__': '__scicode_gold__'}\n"
        "    exec(_REFERENCE, gold)\n"
        "    exec(_SETUP, gold)\n"
        "    target = eval(_VALUE, gold)\n"
        "    namespace = globals()\n"
        "    namespace['target'] = target\n"
        "    exec(_CASE, namespace)\n"
    )


def scicode_records(row: dict, *, line: int | None) -> list[dict | Skipped]:
    fields = Fields(row, line=line)
    problem_id = fields.required_text("problem_id")
    name = fields.text("problem_name") or f"SciCode {problem_id}"
    dependencies = fields.text("required_dependencies")
    main = fields.text("problem_description_main")
    steps = row.get("sub_steps")
    if not isinstance(steps, list) or not steps:
        fields.fail("sub_steps", "must be a non-empty list of steps")
    records: list[dict | Skipped] = []
    prior_gold: list[str] = []
    for index, raw in enumerate(steps):
        if not isinstance(raw, dict):
            fields.fail(f"sub_steps[{index}]", "must be an object")
        step = Fields(raw, line=line, prefix=f"sub_steps[{index}].")
        number = step.required_text("step_number")
        header = step.required_text("function_header")
        found = _HEADER_NAME.search(header)
        if not found:
            step.fail("function_header", "names no function or class")
        entry = found.group(1)
        prompt = step.required_text("step_description_prompt")
        cases = raw.get("test_cases")
        if not isinstance(cases, list) or not all(isinstance(c, str) for c in cases):
            step.fail("test_cases", "must be a list of Python snippets")
        compared = [
            _compared_value(case, fields=step, key=f"test_cases[{i}]")
            for i, case in enumerate(cases)
        ]
        gold = step.text("ground_truth_code")
        prior = "\n\n".join(prior_gold)
        if gold.strip():
            prior_gold.append(gold)
        if not gold.strip() or not cases:
            # No gold code to compute targets with: skipped, counted, reported.
            missing = "no test cases" if gold.strip() else "no gold code (ground_truth_code)"
            records.append(Skipped(f"step {number}: {missing}"))
            continue
        background = step.text("step_background")
        stub = f"{header}\n\n{step.text('return_line')}\n"
        statement = "\n\n".join(
            part
            for part in (
                f"Part of: {name}. {main}".strip(),
                prompt,
                background,
                f"Available imports:\n```python\n{dependencies}\n```" if dependencies else "",
                f"Complete the function `{entry}`:\n```python\n{stub}```",
            )
            if part.strip()
        )
        tests = [
            {
                "tier": "assert",
                "ordinal": i,
                "hidden": True,
                "input": _test_program(
                    dependencies=dependencies,
                    prior=prior,
                    gold=gold,
                    case=case,
                    setup=setup,
                    value=value,
                ),
                "output": "",
                "provenance": {"source": "scicode-test-case", "case": i},
            }
            for i, (case, (setup, value)) in enumerate(zip(cases, compared, strict=True))
        ]
        records.append(
            seed_record(
                dataset=DATASET,
                origin_id=number,
                title=f"{name} ({number})",
                statement=statement,
                reference=f"{dependencies}\n\n{gold}".strip() + "\n",
                tests=tests,
                harness="assert",
                entry_point=entry,
                starter_code=f"{dependencies}\n\n{stub}".lstrip(),
                metadata={"problem_id": problem_id, "step": index + 1, "steps": len(steps)},
            )
        )
    return records
