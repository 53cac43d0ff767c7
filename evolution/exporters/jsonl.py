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
    "reference_provenance",
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


def problem_record(
    problem, *, set_name: str | None = None, member: bool = True, tests=None
) -> dict:
    """The JSON-ready dict for one problem. ``tests`` defaults to ``problem.tests.all()``
    (prefetch them when exporting many problems). ``member=False`` marks an ancestor carried
    only so that its descendants can link to it: the importer stores it but leaves it out
    of the set."""
    record = {
        "format": FORMAT,
        "public_id": problem.public_id,
        "problem_set": set_name,
        "member": member,
    }
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


def export_problems(
    queryset, *, set_name: str | None = None, include_ancestors: bool = False
) -> Iterator[str]:
    """Yield one ``benchforge-problem/1`` line (with its trailing newline) per problem, in id
    order. Parents sort before their children (they are created first), so a file holding a
    whole lineage imports in one pass. ``set_name`` is written as each line's
    ``problem_set``, the set the importer puts the problems in unless told otherwise.

    With ``include_ancestors`` the parents and lineage roots of the problems, transitively,
    are written too (``"member": false``), so that evolved problems import into a database
    that lacks their seeds."""
    from evolution.models import Problem

    member_ids = set(queryset.values_list("id", flat=True))
    all_ids = member_ids | (_ancestor_ids(member_ids) if include_ancestors else set())
    problems = (
        Problem.objects.filter(id__in=all_ids)
        .select_related("parent", "lineage_root")
        .prefetch_related("tests")
        .order_by("id")
        .iterator(chunk_size=200)
    )
    for problem in problems:
        record = problem_record(problem, set_name=set_name, member=problem.id in member_ids)
        yield json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _ancestor_ids(ids: set[int]) -> set[int]:
    """Every parent and lineage root above ``ids``, not including ``ids`` themselves."""
    from evolution.models import Problem

    found: set[int] = set()
    frontier = set(ids)
    while frontier:
        links = Problem.objects.filter(id__in=frontier).values_list("parent_id", "lineage_root_id")
        frontier = {pk for pair in links for pk in pair if pk is not None} - found - ids
        found |= frontier
    return found
