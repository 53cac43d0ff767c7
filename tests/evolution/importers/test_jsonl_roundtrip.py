import json
from datetime import UTC, datetime

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evolution.exporters.jsonl import FORMAT, export_problems
from evolution.importers import SeedImportError, import_seeds
from evolution.models import Problem, ProblemSet, TestCase
from tests.factories import (
    EvolvedProblemFactory,
    ProblemFactory,
    ProblemSetFactory,
    TestCaseFactory,
)

pytestmark = pytest.mark.django_db

BIG = "9\n" * 20_000  # over the inline limit: stored compressed


def _lineage_set() -> ProblemSet:
    seed = ProblemFactory(
        title="Sum of two — «unicode»",
        statement="Add.\u2028Not a line end in JSONL.",
        contest_date=datetime(2023, 8, 21, tzinfo=UTC),
        metadata={"platform": "codeforces", "tags": ["math"]},
        comparison={"mode": "float", "rel_tol": 1e-6},
        time_limit_s=2.5,
        memory_mb=256,
    )
    TestCaseFactory(problem=seed, tier="public", ordinal=0, hidden=False)
    small = TestCaseFactory(problem=seed, tier="small", ordinal=0, provenance={"seed": 7})
    small.input = BIG
    small.save()
    child = EvolvedProblemFactory(parent=seed, harness="function", entry_point="solve")
    TestCaseFactory(problem=child, tier="stress", ordinal=2)
    grandchild = EvolvedProblemFactory(parent=child)
    return ProblemSetFactory(name="lineage", problems=[seed, child, grandchild])


def _export(name="lineage") -> list[str]:
    return list(export_problems(ProblemSet.objects.get(name=name).problems.all(), set_name=name))


def _empty_database() -> None:
    ProblemSet.objects.all().delete()
    # Parents are protected: delete the deepest problems first.
    for problem in Problem.objects.order_by("-lineage_depth"):
        problem.delete()


def test_export_then_import_into_an_empty_database_is_identical():
    _lineage_set()
    before = _export()
    _empty_database()
    assert Problem.objects.count() == TestCase.objects.count() == 0

    report = import_seeds(source="jsonl", content="".join(before))

    assert (report.created, report.updated, report.unchanged) == (3, 0, 0)
    assert report.problem_set.name == "lineage"
    assert _export() == before
    big = TestCase.objects.get(tier="small")
    assert big.input_blob is not None and big.input == BIG
    grandchild = Problem.objects.get(lineage_depth=2)
    assert grandchild.parent.parent == grandchild.lineage_root


def test_every_line_carries_the_format_tag_and_all_problem_fields():
    _lineage_set()
    records = [json.loads(line) for line in _export()]
    assert [r["format"] for r in records] == [FORMAT] * 3
    seed, child, grandchild = records
    assert seed["contest_date"] == "2023-08-21T00:00:00+00:00"
    assert seed["parent"] is None and child["parent"] == seed["public_id"]
    assert grandchild["lineage_root"] == seed["public_id"]
    assert [t["tier"] for t in seed["tests"]] == ["public", "small"]
    assert seed["tests"][1]["provenance"] == {"seed": 7}


def test_reimporting_an_export_changes_nothing():
    _lineage_set()
    lines = _export()
    report = import_seeds(source="jsonl", content="".join(lines))
    assert (report.created, report.updated, report.unchanged) == (0, 0, 3)
    assert Problem.objects.count() == 3


def test_the_commands_round_trip_through_a_file(tmp_path, capsys):
    _lineage_set()
    out = tmp_path / "lineage.jsonl"
    call_command("export_problems", "--set", "lineage", "--out", str(out))
    exported = out.read_text(encoding="utf-8")
    _empty_database()

    call_command("import_seeds", "jsonl", str(out))

    assert "lineage: 3 created, 0 updated, 0 unchanged" in capsys.readouterr().out
    assert "".join(_export()) == exported


def test_a_matching_origin_keeps_the_existing_public_id():
    _lineage_set()
    seed_line = json.loads(_export()[0])
    original = seed_line["public_id"]
    seed_line["public_id"] = "pffffffffffffffff"
    report = import_seeds(source="jsonl", content=json.dumps(seed_line), set_name="other")
    assert (report.created, report.unchanged) == (0, 1)
    assert Problem.objects.filter(public_id=original).exists()


def test_a_line_may_be_imported_into_a_set_it_does_not_name():
    _lineage_set()
    report = import_seeds(source="jsonl", content="".join(_export()), set_name="copy")
    assert report.problem_set.problems.count() == 3


def _seed_line(**changes) -> str:
    record = {
        "format": FORMAT,
        "origin_dataset": "hand",
        "origin_id": "h1",
        "problem_set": "hand",
        "title": "Echo",
        "statement": "Print the input.",
        "harness": "stdio",
        "tests": [{"tier": "small", "ordinal": 0, "input": "1\n", "output": "1\n"}],
    }
    record.update(changes)
    return json.dumps({k: v for k, v in record.items() if v is not ...})


def test_a_hand_written_minimal_line_gets_the_documented_defaults():
    import_seeds(source="jsonl", content=_seed_line())
    problem = Problem.objects.get()
    assert (problem.kind, problem.method, problem.time_limit_s, problem.memory_mb) == (
        "seed",
        "imported",
        6.0,
        512,
    )
    assert problem.tests.get().hidden is True


@pytest.mark.parametrize(
    "changes, field, message",
    [
        ({"format": ...}, "format", "must be 'benchforge-problem/1'"),
        ({"titel": "typo"}, "titel", "is not a field"),
        ({"harness": "interactive"}, "harness", "must be one of stdio, function, assert"),
        ({"time_limit_s": 0}, "time_limit_s", "greater than 0"),
        ({"memory_mb": "lots"}, "memory_mb", "must be an integer"),
        ({"origin_id": ""}, "public_id", "needs a public_id or an origin_id"),
        ({"kind": "evolved"}, "parent", "needs its parent"),
        ({"parent": "pnowhere", "kind": "evolved"}, "parent", "neither in the database"),
        (
            {"tests": [{"tier": "public", "ordinal": 0, "hidden": True}]},
            "tests[0].hidden",
            "cannot be hidden",
        ),
        ({"tests": [{"tier": "huge", "ordinal": 0}]}, "tests[0].tier", "must be one of"),
        ({"tests": [{"tier": "small"}]}, "tests[0].ordinal", "is missing"),
        (
            {"tests": [{"tier": "small", "ordinal": 1}, {"tier": "small", "ordinal": 1}]},
            "tests[1].ordinal",
            "repeats small #1",
        ),
        (
            {"tests": [{"tier": "small", "ordinal": 0, "input": 5}]},
            "tests[0].input",
            "must be a string",
        ),
        ({"title": "x" * 301}, "title", "at most 300 characters"),
    ],
)
def test_it_names_the_line_and_field_of_a_bad_value(changes, field, message):
    content = _seed_line(origin_id="fine") + "\n" + _seed_line(**changes)
    with pytest.raises(SeedImportError) as caught:
        import_seeds(source="jsonl", content=content)
    assert (caught.value.line, caught.value.field) == (2, field)
    assert message in caught.value.message
    assert Problem.objects.count() == 0


def test_lines_that_disagree_on_the_set_are_refused():
    content = _seed_line() + "\n" + _seed_line(origin_id="h2", problem_set="elsewhere")
    with pytest.raises(SeedImportError, match="earlier lines name 'hand'") as caught:
        import_seeds(source="jsonl", content=content)
    assert (caught.value.line, caught.value.field) == (2, "problem_set")


def test_a_file_without_a_set_name_needs_the_option():
    with pytest.raises(SeedImportError, match="no problem set named"):
        import_seeds(source="jsonl", content=_seed_line(problem_set=None))
    report = import_seeds(source="jsonl", content=_seed_line(problem_set=None), set_name="given")
    assert report.problem_set.name == "given"


def test_export_of_an_unknown_set_names_the_known_ones():
    ProblemSetFactory(name="known")
    with pytest.raises(CommandError, match=r"no problem set named 'nope' \(known: known\)"):
        call_command("export_problems", "--set", "nope", "--out", "-")


def test_a_line_that_would_steal_another_problems_origin_is_refused():
    first = ProblemFactory(origin_dataset="hand", origin_id="one")
    ProblemFactory(origin_dataset="hand", origin_id="two")
    line = json.loads(next(export_problems(Problem.objects.filter(pk=first.pk))))
    line["origin_id"] = "two"
    with pytest.raises(SeedImportError, match="the database refused the problem") as caught:
        import_seeds(source="jsonl", content=json.dumps(line), set_name="hand")
    assert caught.value.line == 1
    assert Problem.objects.get(pk=first.pk).origin_id == "one"


def _evolved_only_set() -> ProblemSet:
    seed = ProblemFactory()
    child = EvolvedProblemFactory(parent=seed)
    grandchild = EvolvedProblemFactory(parent=child)
    return ProblemSetFactory(name="evolved", problems=[grandchild])


def test_an_evolved_set_without_its_ancestors_names_the_missing_parent():
    lines = _export(_evolved_only_set().name)
    _empty_database()
    with pytest.raises(SeedImportError, match="export the ancestors too") as caught:
        import_seeds(source="jsonl", content="".join(lines))
    assert (caught.value.line, caught.value.field) == (1, "parent")
    assert Problem.objects.count() == 0


def test_with_ancestors_an_evolved_set_imports_into_an_empty_database(tmp_path):
    _evolved_only_set()
    out = tmp_path / "evolved.jsonl"
    call_command("export_problems", "--set", "evolved", "--out", str(out), "--with-ancestors")
    exported = out.read_text(encoding="utf-8")
    assert [json.loads(line)["member"] for line in exported.splitlines()] == [False, False, True]
    _empty_database()

    report = import_seeds(source="jsonl", path=str(out))

    assert report.created == 3
    assert [p.lineage_depth for p in report.problem_set.problems.all()] == [2]
    again = tmp_path / "again.jsonl"
    call_command("export_problems", "--set", "evolved", "--out", str(again), "--with-ancestors")
    assert again.read_text(encoding="utf-8") == exported
