"""CodeContests, APPS and TACO rows as the Hub serves them (hand-written fixtures in
data/hub/, see its README): imported in one transaction, errors naming line and field,
re-imports without duplicates, Parquet as well as JSON lines."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from evolution import sandbox
from evolution.importers import SOURCES, SeedImportError, import_seeds
from evolution.models import Problem, ProblemSet, TestCase

pytestmark = pytest.mark.django_db

HUB = Path(__file__).parent / "data" / "hub"


def _snapshot():
    return (Problem.objects.count(), TestCase.objects.count(), ProblemSet.objects.count())


def _rows(name: str) -> list[dict]:
    return [json.loads(x) for x in (HUB / name).read_text().splitlines() if x.strip()]


def _passes(problem: Problem) -> bool:
    tests = [sandbox.TestSpec(input=t.input, output=t.output) for t in problem.tests.all()]
    result = sandbox.judge(
        problem.reference_solution,
        tests,
        harness="stdio",
        limits=sandbox.Limits(time_s=float(problem.time_limit_s), memory_mb=problem.memory_mb),
    )
    return result.verdict == "AC"


def test_the_sources_are_listed():
    assert {"codecontests", "apps", "taco"} <= set(SOURCES)


def test_codecontests_rows_import_with_tiers_limits_and_a_python3_reference():
    report = import_seeds(source="codecontests", path=str(HUB / "codecontests.jsonl"))
    assert (report.created, report.updated, report.unchanged) == (2, 0, 0)
    assert report.with_reference == 1 and report.skipped == 0
    assert report.problem_set.name == "codecontests"
    sums = Problem.objects.get(origin_dataset="codecontests", origin_id="9001_A. Two Sums")
    assert sums.harness == "stdio" and sums.title == "9001_A. Two Sums"
    # The first PYTHON3 (language 3) solution, not the C++ or Python 2 one.
    assert sums.reference_solution == "a, b = map(int, input().split())\nprint(a + b)\n"
    assert float(sums.time_limit_s) == 1.5 and sums.memory_mb == 256
    assert sums.origin_difficulty == "A"
    assert sums.metadata["platform"] == "codeforces" and sums.metadata["cf_rating"] == 800
    tiers = {(t.tier, t.hidden) for t in sums.tests.all()}
    assert tiers == {("public", False), ("medium", True), ("large", True)}
    assert sums.tests.count() == 4
    assert _passes(sums)
    words = Problem.objects.get(origin_id="p09002 Reverse Words")
    assert words.reference_solution == "" and words.metadata["platform"] == "aizu"
    assert float(words.time_limit_s) == 6.0 and words.memory_mb == 512


def test_codecontests_parquet_reads_the_same_rows():
    import_seeds(source="codecontests", path=str(HUB / "codecontests.jsonl"))
    # The Hub's Parquet layout: nested structs and lists, built from the same rows.
    table = pa.Table.from_pylist(_rows("codecontests.jsonl"))
    path = HUB.parent / "_tmp_codecontests.parquet"
    try:
        pq.write_table(table, path)
        report = import_seeds(source="codecontests", path=str(path))
    finally:
        path.unlink(missing_ok=True)
    assert (report.created, report.updated, report.unchanged) == (0, 0, 2)


@pytest.mark.parametrize("source", ["codecontests", "apps", "taco"])
def test_reimporting_creates_no_duplicates(source):
    first = import_seeds(source=source, path=str(HUB / f"{source}.jsonl"))
    before = _snapshot()
    again = import_seeds(source=source, path=str(HUB / f"{source}.jsonl"))
    assert again.created == 0 and again.updated == 0 and again.unchanged == first.created
    assert _snapshot() == before


@pytest.mark.parametrize(
    ("source", "change", "field"),
    [
        ("codecontests", {"private_tests": {"input": ["1\n"], "output": []}}, "private_tests"),
        ("codecontests", {"source": 5}, "source"),
        ("apps", {"input_output": '{"inputs": ["1\\n"], '}, "input_output"),
        ("apps", {"solutions": "[1, 2]"}, "solutions[0]"),
        ("taco", {"question": ""}, "question"),
        ("taco", {"tags": "[__import__('os').system('true')]"}, "tags"),
    ],
)
def test_a_malformed_row_is_refused_with_line_and_field_and_nothing_is_written(
    source, change, field, tmp_path
):
    rows = _rows(f"{source}.jsonl")
    rows[1] = {**rows[1], **change}
    path = tmp_path / f"{source}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = _snapshot()
    with pytest.raises(SeedImportError) as caught:
        import_seeds(source=source, path=str(path))
    assert caught.value.line == 2 and caught.value.field == field, str(caught.value)
    assert _snapshot() == before


def test_apps_imports_stdin_rows_and_skips_call_based_ones():
    report = import_seeds(source="apps", path=str(HUB / "apps.jsonl"))
    assert (report.created, report.skipped, report.with_reference) == (2, 1, 1)
    triangular = Problem.objects.get(origin_dataset="apps", origin_id="9101")
    assert triangular.origin_difficulty == "introductory"
    assert triangular.tests.count() == 3 and not triangular.tests.filter(hidden=False).exists()
    assert _passes(triangular)
    # A test given as a list of lines becomes one text.
    lines = Problem.objects.get(origin_dataset="apps", origin_id="9102")
    (test,) = lines.tests.all()
    assert (test.input, test.output) == ("a\nb\n", "b\na\n")
    assert not Problem.objects.filter(origin_dataset="apps", origin_id="9103").exists()
    ((line, reason),) = report.skipped_reasons
    assert line == 3 and reason.startswith("call-based (fn_name ")


def test_taco_imports_limits_tags_and_stable_ids():
    report = import_seeds(source="taco", path=str(HUB / "taco.jsonl"))
    assert (report.created, report.skipped, report.with_reference) == (2, 1, 1)
    shout = Problem.objects.get(origin_dataset="taco", title="Shout")
    assert float(shout.time_limit_s) == 1.0 and shout.memory_mb == 256
    assert shout.metadata["tags"] == ["String algorithms"]
    assert shout.metadata["platform"] == "codechef"
    assert _passes(shout)
    unnamed = Problem.objects.get(origin_dataset="taco", reference_solution="")
    assert unnamed.title == "Print the sum of the numbers on the input line."
    assert float(unnamed.time_limit_s) == 2.0 and unnamed.memory_mb == 128


def test_the_command_reports_references_and_skips():
    out = io.StringIO()
    call_command("import_seeds", "apps", str(HUB / "apps.jsonl"), stdout=out)
    assert "2 created" in out.getvalue()
    assert "1 with a reference solution; 1 skipped" in out.getvalue()
    assert "skipped line 3: call-based (fn_name " in out.getvalue()


def _judge_assert(problem: Problem, code: str) -> str:
    tests = [sandbox.TestSpec(input=t.input, output=t.output) for t in problem.tests.all()]
    return sandbox.judge(
        code,
        tests,
        harness="assert",
        entry_point=problem.entry_point,
        limits=sandbox.Limits(time_s=10.0, memory_mb=problem.memory_mb),
    ).verdict


def test_scicode_steps_import_as_function_level_problems_that_grade_candidates():
    report = import_seeds(source="scicode", path=str(HUB / "scicode.jsonl"))
    # Two gold-coded steps of problem 901; 902.1 has no gold code (test-split style).
    assert (report.created, report.skipped, report.with_reference) == (2, 1, 2)
    assert [reason for _, reason in report.skipped_reasons] == [
        "step 902.1: no gold code (ground_truth_code)"
    ]
    first = Problem.objects.get(origin_dataset="scicode", origin_id="901.1")
    assert first.harness == "assert" and first.entry_point == "to_radians"
    assert first.tests.count() == 2 and set(first.tests.values_list("tier", flat=True)) == {
        "assert"
    }
    assert "def to_radians(deg):" in first.starter_code
    assert "One full turn is 360 degrees" in first.statement
    assert _judge_assert(first, first.reference_solution) == "AC"
    assert _judge_assert(first, "def to_radians(deg):\n    return deg\n") != "AC"
    # 901.2 calls 901.1's function: its tests carry the earlier gold code.
    second = Problem.objects.get(origin_dataset="scicode", origin_id="901.2")
    assert _judge_assert(second, second.reference_solution) == "AC"
    flipped = "import math\ndef projectile_range(v, theta):\n    return v * v / 9.81\n"
    assert _judge_assert(second, flipped) != "AC"


def test_scicode_reimport_and_a_malformed_step():
    import_seeds(source="scicode", path=str(HUB / "scicode.jsonl"))
    before = _snapshot()
    again = import_seeds(source="scicode", path=str(HUB / "scicode.jsonl"))
    assert (again.created, again.updated, again.unchanged) == (0, 0, 2)
    assert _snapshot() == before
    rows = _rows("scicode.jsonl")
    rows[0]["sub_steps"][1]["test_cases"][0] = "x = 1\nprint(x)"
    with pytest.raises(SeedImportError) as caught:
        import_seeds(
            source="scicode", content="".join(json.dumps(r) + "\n" for r in rows), set_name="x"
        )
    assert caught.value.line == 1
    assert caught.value.field == "sub_steps[1].test_cases[0]"
    assert "must end with an assert against target" in str(caught.value)
    assert _snapshot() == before


def test_the_api_imports_hub_rows_and_names_line_and_field(personas):
    url = "/api/problem-sets/import"
    body = {"source": "taco", "content": (HUB / "taco.jsonl").read_text()}
    ok = personas.admin.client.post(url, json.dumps(body), content_type="application/json")
    assert ok.status_code == 200, ok.content
    assert ok.json()["created"] == 2
    assert (ok.json()["with_reference"], ok.json()["skipped"]) == (1, 1)
    ((line, reason),) = ok.json()["skipped_reasons"]
    assert reason.startswith("call-based (fn_name ")
    rows = _rows("codecontests.jsonl")
    rows[1]["public_tests"] = {"input": ["1\n"], "output": [7]}
    bad = {"source": "codecontests", "content": "".join(json.dumps(r) + "\n" for r in rows)}
    refused = personas.admin.client.post(url, json.dumps(bad), content_type="application/json")
    assert refused.status_code == 400
    assert refused.json()["line"] == 2
    assert refused.json()["field"] == "public_tests.output[0]"


def test_a_file_named_parquet_that_is_not_parquet_is_refused(tmp_path):
    path = tmp_path / "rows.parquet"
    path.write_text('{"name": "x"}\n')
    with pytest.raises(SeedImportError, match="is not a Parquet file"):
        import_seeds(source="codecontests", path=str(path))
    assert not ProblemSet.objects.filter(name="codecontests").exists()
