"""The project's own JSONL format, ``benchforge-problem/1`` (docs/jsonl-format.md).

One problem per line with all of its tests. ``export_problems`` writes it and
``import_seeds(source="jsonl")`` reads it back; the two round-trip exactly (public ids,
lineage links and test payloads included).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC

FORMAT = "benchforge-problem/1"

# Problem columns carried verbatim, in the order they appear on a line.
PROBLEM_FIELDS = (
    "title",
    "statement",
    "reference_solution",
    "harness",
    "entry_point",
    "starter_code",
    "time_limit_s",
    "memory_mb",
    "comparison",
    "kind",
    "method",
    "origin_dataset",
    "origin_id",
    "origin_difficulty",
    "contest_date",
    "metadata",
    "lineage_depth",
)
TEST_FIELDS = ("tier", "ordinal", "hidden", "input", "output", "provenance")


def test_record(test) -> dict:
    return {
        "tier": test.tier,
        "ordinal": test.ordinal,
        "hidden": test.hidden,
        "input": test.input,
        "output": test.output,
        "provenance": test.provenance,
    }


def sort_tests(tests: Iterable[dict]) -> list[dict]:
    """The canonical order of tests on a line: by tier name, then ordinal."""
    return sorted(tests, key=lambda t: (t["tier"], t["ordinal"]))


def problem_record(problem, *, set_name: str | None = None, tests=None) -> dict:
    """The JSON-ready dict for one problem. ``tests`` defaults to ``problem.tests.all()``
    (prefetch them when exporting many problems)."""
    record = {"format": FORMAT, "public_id": problem.public_id, "problem_set": set_name}
    for field in PROBLEM_FIELDS:
        record[field] = getattr(problem, field)
    record["time_limit_s"] = float(problem.time_limit_s)
    if problem.contest_date is not None:
        record["contest_date"] = problem.contest_date.astimezone(UTC).isoformat()
    record["parent"] = problem.parent.public_id if problem.parent_id else None
    record["lineage_root"] = problem.lineage_root.public_id if problem.lineage_root_id else None
    rows = problem.tests.all() if tests is None else tests
    record["tests"] = sort_tests(test_record(t) for t in rows)
    return record


def export_problems(queryset, *, set_name: str | None = None) -> Iterator[str]:
    """Yield one ``benchforge-problem/1`` line (with its trailing newline) per problem, in id
    order. Parents sort before their children (they are created first), so a file holding a
    whole lineage imports in one pass. ``set_name`` is written as each line's
    ``problem_set``, the set the importer puts the problems in unless told otherwise."""
    problems = (
        queryset.select_related("parent", "lineage_root")
        .prefetch_related("tests")
        .order_by("id")
        .iterator(chunk_size=200)
    )
    for problem in problems:
        record = problem_record(problem, set_name=set_name)
        yield json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
