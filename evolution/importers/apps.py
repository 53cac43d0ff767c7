"""APPS (``codeparrot/apps``) and TACO (``BAAI/TACO``) rows as stdin/stdout seed records.

Both publish a row per problem with ``question``, ``solutions`` (a JSON string: a list of
Python programs), ``starter_code`` and ``input_output`` (a JSON string:
``{"inputs": [...], "outputs": [...]}`` plus ``fn_name`` for call-based problems). Both
fields are decoded with ``json.loads``: data only. APPS adds ``problem_id``, ``difficulty``
(introductory / interview / competition) and ``url``; TACO has no id and adds ``name``,
``source``, ``difficulty`` (EASY ... VERY_HARD), ``tags``, ``skill_types``, ``time_limit``,
``memory_limit``, ``date`` and more.

Call-based rows (``fn_name`` set) are not imported: their expected outputs are stored in a
form the two datasets' own graders unwrap by special cases (a one-element list may be the
value or hold it), so no faithful ``function`` test can be made from them. They are
counted as skipped in the import report, never silently.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Iterator

from .errors import Skipped
from .reading import Fields
from .rows import iter_rows, json_field, seed_record, stdio_tests, text_lines


def _call_based(fn_name: str) -> Skipped:
    return Skipped(
        f"call-based (fn_name {fn_name!r}): its expected outputs cannot be turned into "
        "faithful function tests"
    )


def decode_tests(fields: Fields) -> tuple[list[tuple[str, str]], str]:
    """(stdin/stdout pairs, fn_name) of the ``input_output`` field."""
    data = json_field(fields, "input_output", default={})
    if not isinstance(data, dict):
        fields.fail("input_output", f"must hold a JSON object, got {type(data).__name__}")
    fn_name = data.get("fn_name") or ""
    if not isinstance(fn_name, str):
        fields.fail("input_output.fn_name", "must be a string")
    inputs, outputs = data.get("inputs") or [], data.get("outputs") or []
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        fields.fail("input_output", "inputs and outputs must be lists")
    if len(inputs) != len(outputs):
        fields.fail("input_output", f"has {len(inputs)} inputs but {len(outputs)} outputs")
    if fn_name:
        return [], fn_name
    pairs = [
        (
            text_lines(stdin, fields=fields, key=f"input_output.inputs[{i}]"),
            text_lines(stdout, fields=fields, key=f"input_output.outputs[{i}]"),
        )
        for i, (stdin, stdout) in enumerate(zip(inputs, outputs, strict=True))
    ]
    return pairs, ""


def decode_solutions(fields: Fields) -> list[str]:
    solutions = json_field(fields, "solutions", default=[])
    if not isinstance(solutions, list):
        fields.fail("solutions", f"must hold a JSON list, got {type(solutions).__name__}")
    for index, text in enumerate(solutions):
        if not isinstance(text, str):
            fields.fail(f"solutions[{index}]", "must be a string")
    return [s for s in solutions if s.strip()]


def _title(statement: str, fallback: str) -> str:
    first = next((ln.strip() for ln in statement.splitlines() if ln.strip()), "")
    return (first[:80] + "…") if len(first) > 80 else first or fallback


# --- APPS ---------------------------------------------------------------------------------


def read_apps(*, path: str | None = None, content: str | None = None) -> Iterator[tuple[int, dict]]:
    for line, row in iter_rows(path=path, content=content):
        yield line, apps_record(row, line=line)


def apps_record(row: dict, *, line: int | None) -> dict | Skipped:
    fields = Fields(row, line=line)
    problem_id = fields.required_text("problem_id")
    statement = fields.required_text("question")
    pairs, fn_name = decode_tests(fields)
    solutions = decode_solutions(fields)
    record = seed_record(
        dataset="apps",
        origin_id=problem_id,
        title=f"APPS {problem_id}",
        statement=statement,
        reference=solutions[0] if solutions else "",
        tests=stdio_tests(pairs, tier="medium", hidden=True, source="apps-test"),
        difficulty=fields.text("difficulty"),
        starter_code=fields.text("starter_code"),
        metadata={"url": fields.text("url"), "solutions": len(solutions)},
    )
    # Checked whole first: a malformed call-based row is refused, not skipped.
    return _call_based(fn_name) if fn_name else record


# --- TACO ---------------------------------------------------------------------------------

_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _limit(fields: Fields, key: str, default: float) -> float:
    """TACO writes limits as text ("1 second", "256.0 megabytes"); none or no number means
    the default."""
    value = fields.obj.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        found = _NUMBER.search(value)
        if not found:
            return default
        number = float(found.group())
    else:
        fields.fail(key, f"must be text or a number, got {type(value).__name__}")
    return number if number > 0 else default


def _list_field(fields: Fields, key: str) -> list[str]:
    """TACO's ``tags`` and ``skill_types`` are text holding a list, written either as JSON or
    as a Python literal (``"['Math']"``); ``ast.literal_eval`` reads literals only, never
    code. Anything else is refused."""
    value = fields.obj.get(key)
    if value is None or value == "":
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            try:
                value = ast.literal_eval(value)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                fields.fail(key, "is neither a JSON list nor a list literal")
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        fields.fail(key, "must be a list of strings")
    return value


def taco_id(row: dict) -> str:
    """TACO rows carry no id: a digest of what identifies the problem (url, name, question).
    The same row always gets the same id, so a re-import finds it."""
    key = "\x1f".join(str(row.get(k) or "") for k in ("url", "name", "question"))
    return "taco-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]


def read_taco(*, path: str | None = None, content: str | None = None) -> Iterator[tuple[int, dict]]:
    for line, row in iter_rows(path=path, content=content):
        yield line, taco_record(row, line=line)


def taco_record(row: dict, *, line: int | None) -> dict | Skipped:
    fields = Fields(row, line=line)
    statement = fields.required_text("question")
    pairs, fn_name = decode_tests(fields)
    solutions = decode_solutions(fields)
    name = fields.text("name")
    record = seed_record(
        dataset="taco",
        origin_id=taco_id(row),
        title=name.strip() or _title(statement, "TACO problem"),
        statement=statement,
        reference=solutions[0] if solutions else "",
        tests=stdio_tests(pairs, tier="medium", hidden=True, source="taco-test"),
        difficulty=fields.text("difficulty"),
        starter_code=fields.text("starter_code"),
        time_limit_s=_limit(fields, "time_limit", 6.0),
        memory_mb=max(16, int(_limit(fields, "memory_limit", 512))),
        metadata={
            "platform": fields.text("source"),
            "url": fields.text("url"),
            "tags": _list_field(fields, "tags"),
            "skill_types": _list_field(fields, "skill_types"),
            "date": fields.text("date"),
            "solutions": len(solutions),
        },
    )
    return _call_based(fn_name) if fn_name else record
