"""Reader for the project's own ``benchforge-problem/1`` JSONL (docs/jsonl-format.md).

Strict on purpose: an unknown field is an error (a typo must not silently drop data), and
every value is type-checked here so that the database never sees a bad row.
"""

from __future__ import annotations

from collections.abc import Iterator

from evolution.exporters.jsonl import FORMAT, PROBLEM_FIELDS, TEST_FIELDS
from evolution.models.problems import Harness, ProblemKind, TestTier

from .errors import SeedImportError
from .reading import Fields, iter_jsonl

_LINE_KEYS = {"format", "public_id", "problem_set", "member", "parent", "lineage_root", "tests"}
_LINE_KEYS |= set(PROBLEM_FIELDS)


def read_jsonl(
    *, path: str | None = None, content: str | None = None
) -> Iterator[tuple[int, dict]]:
    for line, obj in iter_jsonl(path=path, content=content):
        yield line, jsonl_record(obj, line=line)


def jsonl_record(obj: dict, *, line: int | None) -> dict:
    fields = Fields(obj, line=line)
    unknown = sorted(set(obj) - _LINE_KEYS)
    if unknown:
        fields.fail(unknown[0], "is not a field of " + FORMAT)
    if obj.get("format") != FORMAT:
        fields.fail("format", f"must be {FORMAT!r}, got {obj.get('format')!r}")
    record = {
        "public_id": fields.optional_text("public_id"),
        "problem_set": fields.optional_text("problem_set"),
        "member": fields.boolean("member", True),
        "title": fields.required_text("title"),
        "statement": fields.required_text("statement"),
        "reference_solution": fields.text("reference_solution"),
        "reference_provenance": _object(fields, "reference_provenance"),
        "harness": fields.choice("harness", Harness.values),
        "entry_point": fields.text("entry_point"),
        "starter_code": fields.text("starter_code"),
        "time_limit_s": fields.number("time_limit_s", 6.0, above=0),
        "memory_mb": fields.integer("memory_mb", 512, minimum=16),
        "comparison": _object(fields, "comparison"),
        "kind": fields.choice("kind", ProblemKind.values, default=ProblemKind.SEED),
        "method": fields.text("method", "imported") or "imported",
        "origin_dataset": fields.text("origin_dataset"),
        "origin_id": fields.text("origin_id"),
        "origin_difficulty": fields.text("origin_difficulty"),
        "contest_date": fields.timestamp("contest_date"),
        "metadata": _object(fields, "metadata"),
        "lineage_depth": fields.integer("lineage_depth", 0, minimum=0),
        "parent": fields.optional_text("parent"),
        "lineage_root": fields.optional_text("lineage_root"),
        "tests": _tests(fields),
    }
    # Files exported before the provenance had a field of its own carry it in metadata.
    if "reference_provenance" in record["metadata"]:
        record["metadata"] = dict(record["metadata"])
        older = record["metadata"].pop("reference_provenance")
        if not record["reference_provenance"] and isinstance(older, dict):
            record["reference_provenance"] = older
    if record["public_id"] is None and not record["origin_id"]:
        fields.fail(
            "public_id", "a problem needs a public_id or an origin_id, or re-imports duplicate it"
        )
    if record["kind"] != ProblemKind.SEED and record["parent"] is None:
        fields.fail("parent", f"a {record['kind']} problem needs its parent's public_id")
    return record


def _object(fields: Fields, key: str) -> dict:
    value = fields.obj.get(key, {})
    if not isinstance(value, dict):
        fields.fail(key, f"must be an object, got {type(value).__name__}")
    return value


def _tests(fields: Fields) -> list[dict]:
    value = fields.obj.get("tests")
    if not isinstance(value, list):
        fields.fail("tests", "must be a list (empty if the problem has no tests)")
    tests, positions = [], set()
    for index, item in enumerate(value):
        prefix = f"tests[{index}]."
        if not isinstance(item, dict):
            raise SeedImportError("must be an object", line=fields.line, field=f"tests[{index}]")
        test = Fields(item, line=fields.line, prefix=prefix)
        unknown = sorted(set(item) - set(TEST_FIELDS))
        if unknown:
            test.fail(unknown[0], "is not a field of a test")
        tier = test.choice("tier", TestTier.values)
        ordinal = test.integer("ordinal", None, minimum=0)
        hidden = test.boolean("hidden", tier != TestTier.PUBLIC)
        if tier == TestTier.PUBLIC and hidden:
            test.fail("hidden", "public tests cannot be hidden")
        if (tier, ordinal) in positions:
            test.fail("ordinal", f"repeats {tier} #{ordinal}")
        positions.add((tier, ordinal))
        for key in ("input", "output"):
            if not isinstance(item.get(key, ""), str):
                test.fail(key, "must be a string")
        provenance = item.get("provenance", {})
        if not isinstance(provenance, dict):
            test.fail("provenance", "must be an object")
        tests.append(
            {
                "tier": tier,
                "ordinal": ordinal,
                "hidden": hidden,
                "input": item.get("input", ""),
                "output": item.get("output", ""),
                "provenance": provenance,
            }
        )
    return tests
