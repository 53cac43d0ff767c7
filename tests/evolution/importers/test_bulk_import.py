"""An import writes in batches (issue #36): its queries do not grow with the number of
problems, a re-import of the same file writes nothing, and a changed re-import updates in
place, with its tests, indexed again for the contamination screen."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evolution.importers import import_seeds
from evolution.models import Problem, TestCase
from evolution.screening.models import IndexedProblem

pytestmark = pytest.mark.django_db


def _lines(count: int, *, start: int = 0, difficulty: str = "easy") -> str:
    """``count`` LiveCodeBench-shaped lines (plain JSON private tests), simulated."""
    rows = []
    for i in range(start, start + count):
        tests = [
            {"input": f"{i} {j}\n", "output": f"{i + j}\n", "testtype": "stdin"} for j in range(3)
        ]
        rows.append(
            json.dumps(
                {
                    "question_id": f"bulk{i:04d}",
                    "question_title": f"Bulk problem {i}",
                    "question_content": f"Read two numbers and print their sum, case {i}.",
                    "platform": "simulated",
                    "contest_id": f"sim-{i}",
                    "contest_date": "2024-05-01T00:00:00",
                    "difficulty": difficulty,
                    "starter_code": "",
                    "public_test_cases": json.dumps(tests[:1]),
                    "private_test_cases": json.dumps(tests[1:]),
                    "metadata": "{}",
                }
            )
        )
    return "\n".join(rows) + "\n"


def _queries(content: str, set_name: str) -> tuple[int, object]:
    with CaptureQueriesContext(connection) as captured:
        report = import_seeds(source="lcb", content=content, set_name=set_name)
    return len(captured), report


def test_an_imports_queries_do_not_grow_with_its_problems():
    few, small = _queries(_lines(10), "ten")
    many, large = _queries(_lines(40, start=100), "forty")
    assert (small.created, large.created) == (10, 40)
    assert many == few, (few, many)
    assert few < 40
    assert TestCase.objects.filter(problem__origin_id="bulk0120").count() == 3
    assert IndexedProblem.objects.count() == 50


def test_a_reimport_is_idempotent_and_a_changed_one_updates_in_place():
    content = _lines(40)
    first, report = _queries(content, "forty")
    ids = dict(Problem.objects.values_list("origin_id", "pk"))
    tests = sorted(TestCase.objects.values_list("problem_id", "tier", "ordinal"))
    again, report = _queries(content, "forty")
    assert (report.created, report.updated, report.unchanged) == (0, 0, 40)
    assert again < 40
    assert dict(Problem.objects.values_list("origin_id", "pk")) == ids
    assert sorted(TestCase.objects.values_list("problem_id", "tier", "ordinal")) == tests
    changed, report = _queries(_lines(40, difficulty="hard"), "forty")
    assert (report.created, report.updated, report.unchanged) == (0, 40, 0)
    assert changed < 80
    assert set(Problem.objects.values_list("origin_difficulty", flat=True)) == {"hard"}
    assert TestCase.objects.count() == 120 and IndexedProblem.objects.count() == 40


def test_the_command_reports_each_count(tmp_path):
    path = tmp_path / "bulk.jsonl"
    path.write_text(_lines(12), encoding="utf-8")
    out = []

    class Out:
        def write(self, text):
            out.append(text)

        def flush(self):
            pass

    call_command("import_seeds", "lcb", str(path), "--set", "twelve", stdout=Out())
    assert "twelve: 12 created, 0 updated, 0 unchanged (12 problems in set)" in "".join(out)
