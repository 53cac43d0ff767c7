"""Reference solutions are data: a re-import keeps them unless told to replace them (and says
so per problem), every reference carries where it came from, and a reference from a solutions
file or from the record itself is run on the record's own public and private tests before it
is stored; one that fails is refused naming the failing test, and the rest of the import
stands.

Records: the real LiveCodeBench 1873_A (Codeforces, stdin) and, in the same published shape,
AtCoder abc308_a (stdin) and LeetCode 2828 (call-based), ``data/lcb_atcoder_leetcode.jsonl``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from evolution.exporters.jsonl import export_problems
from evolution.importers import import_seeds
from evolution.models import Problem, ProblemSet
from tests.evolution.benchevolver import lcb_world as w

pytestmark = pytest.mark.django_db

DATA = Path(__file__).parent / "data"
NEW_SCHEME_ID = "abc308_a"
NEW_SCHEME_OK = """
s = list(map(int, input().split()))
ok = all(a <= b for a, b in zip(s, s[1:])) and all(100 <= x <= 675 and x % 25 == 0 for x in s)
print("Yes" if ok else "No")
"""
# Passes the three samples, forgets the multiples of 25: fails the fourth private test.
NEW_SCHEME_NO_MULTIPLES = """
s = list(map(int, input().split()))
ok = all(a <= b for a, b in zip(s, s[1:])) and all(100 <= x <= 675 for x in s)
print("Yes" if ok else "No")
"""
SHORT_SORT_OTHER = """
for _ in range(int(input())):
    s = input().strip()
    print("YES" if s in ("abc", "acb", "bac", "cba") else "NO")
"""


@pytest.fixture
def records(tmp_path) -> Path:
    """Three LiveCodeBench records: Codeforces 1873_A, AtCoder abc308_a, LeetCode 2828."""
    path = tmp_path / "lcb.jsonl"
    path.write_text(
        (DATA / "lcb_sample.jsonl").read_text().strip()
        + "\n"
        + (DATA / "lcb_atcoder_leetcode.jsonl").read_text(),
        encoding="utf-8",
    )
    return path


def _solutions(tmp_path, name: str, entries: dict[str, str]) -> Path:
    path = tmp_path / name
    path.write_text(
        "".join(json.dumps({"question_id": q, "solution": s}) + "\n" for q, s in entries.items()),
        encoding="utf-8",
    )
    return path


def _good(tmp_path, name="solutions.jsonl") -> Path:
    return _solutions(
        tmp_path,
        name,
        {
            w.SHORT_SORT_ID: w.SHORT_SORT_OK,
            NEW_SCHEME_ID: NEW_SCHEME_OK,
            w.ACRONYM_ID: w.ACRONYM_OK,
        },
    )


def _command(*args) -> str:
    out = io.StringIO()
    call_command("import_seeds", *map(str, args), stdout=out)
    return out.getvalue()


def _references() -> dict[str, str]:
    return dict(Problem.objects.values_list("origin_id", "reference_solution"))


# --------------------------------------------------------------------------- keeping


def test_a_reimport_without_solutions_keeps_every_reference(records, tmp_path):
    first = _command("lcb", records, "--solutions", _good(tmp_path))
    assert "3 created, 0 updated, 0 unchanged (3 problems in set); 3 with a reference" in first
    before = _references()

    again = _command("lcb", records)
    other_set = _command("lcb", records, "--set", "lcb-other")

    assert _references() == before
    assert all(before.values())
    assert "0 created, 0 updated, 3 unchanged (3 problems in set); 3 with a reference" in again
    assert "3 with a reference solution (3 kept)" in again
    assert "lcb-other: 0 created, 0 updated, 3 unchanged" in other_set
    provenance = Problem.objects.get(origin_id=NEW_SCHEME_ID).reference_provenance
    assert provenance["source"] == "solutions-file"


def test_a_different_reference_is_not_used_without_replace_references_and_says_so(
    records, tmp_path
):
    _command("lcb", records, "--solutions", _good(tmp_path))
    other = _solutions(tmp_path, "other.jsonl", {w.SHORT_SORT_ID: SHORT_SORT_OTHER})

    out = _command("lcb", records, "--solutions", other)

    assert Problem.objects.get(origin_id=w.SHORT_SORT_ID).reference_solution == w.SHORT_SORT_OK
    assert f"{w.SHORT_SORT_ID} (A. Short Sort): kept the stored reference" in out
    assert "other.jsonl" in out and "--replace-references" in out


def test_replace_references_replaces_them_and_prints_each_problem(records, tmp_path):
    _command("lcb", records, "--solutions", _good(tmp_path))
    other = _solutions(tmp_path, "other.jsonl", {w.SHORT_SORT_ID: SHORT_SORT_OTHER})

    out = _command("lcb", records, "--solutions", other, "--replace-references")

    problem = Problem.objects.get(origin_id=w.SHORT_SORT_ID)
    assert problem.reference_solution == SHORT_SORT_OTHER
    assert problem.reference_provenance == {
        "source": "solutions-file",
        "file": "other.jsonl",
        "line": 1,
        "tests_passed": "5/5",
    }
    assert f"{w.SHORT_SORT_ID} (A. Short Sort): reference replaced" in out
    assert "was: solutions file solutions.jsonl" in out
    # The file gave nothing for the other two: with --replace-references they are dropped, and
    # each is named.
    assert f"{NEW_SCHEME_ID} (New Scheme): reference dropped" in out
    assert f"{w.ACRONYM_ID} (check-if-a-string-is-an-acronym-of-words): reference dropped" in out
    assert _references()[NEW_SCHEME_ID] == ""
    assert Problem.objects.get(origin_id=NEW_SCHEME_ID).reference_provenance == {}


# --------------------------------------------------------------------------- verifying


def test_a_wrong_reference_in_a_solutions_file_is_refused_naming_the_failing_test(
    records, tmp_path
):
    solutions = _solutions(
        tmp_path,
        "wrong.jsonl",
        {
            w.SHORT_SORT_ID: 'print("YES")\n',
            NEW_SCHEME_ID: NEW_SCHEME_OK,
            w.ACRONYM_ID: w.ACRONYM_OK,
        },
    )

    out = _command("lcb", records, "--solutions", solutions)

    assert "3 created" in out and "2 with a reference solution; 1 reference refused" in out
    assert f"{w.SHORT_SORT_ID} (A. Short Sort): reference refused (solutions file " in out
    assert "wrong.jsonl, line 1): wrong answer on public test #0" in out
    references = _references()
    assert references[w.SHORT_SORT_ID] == ""
    assert references[NEW_SCHEME_ID] == NEW_SCHEME_OK
    assert references[w.ACRONYM_ID] == w.ACRONYM_OK
    # The refused problem is imported all the same, with every test.
    assert Problem.objects.get(origin_id=w.SHORT_SORT_ID).tests.count() == 5


def test_a_reference_failing_only_a_private_test_is_refused_naming_that_test(records, tmp_path):
    solutions = _solutions(
        tmp_path,
        "sols.jsonl",
        {NEW_SCHEME_ID: NEW_SCHEME_NO_MULTIPLES, w.ACRONYM_ID: w.ACRONYM_WRONG},
    )

    report = import_seeds(source="lcb", path=str(records), solutions_path=str(solutions))

    assert report.with_reference == 0
    notes = {note.origin_id: note for note in report.references}
    scheme, acronym = notes[NEW_SCHEME_ID], notes[w.ACRONYM_ID]
    assert (scheme.action, scheme.test) == ("refused", "private test medium #3")
    assert "wrong answer" in scheme.detail and "No" in scheme.detail
    # Call-based: judged the way LiveCodeBench calls class Solution.
    assert (acronym.action, acronym.test) == ("refused", "private test medium #2")
    assert not Problem.objects.exclude(reference_solution="").exists()


def test_a_wrong_reference_carried_by_the_record_itself_is_refused(lcb_sample):
    right = dict(lcb_sample, question_id="right", reference_solution=w.SHORT_SORT_OK)
    wrong = dict(lcb_sample, question_id="wrong", reference_solution='print("YES")\n')

    report = import_seeds(source="lcb", content=f"{json.dumps(right)}\n{json.dumps(wrong)}\n")

    assert (report.created, report.with_reference) == (2, 1)
    kept = Problem.objects.get(origin_id="right")
    assert kept.reference_provenance == {
        "source": "record",
        "dataset": "livecodebench",
        "tests_passed": "5/5",
    }
    (note,) = report.references
    assert (note.origin_id, note.action, note.test) == ("wrong", "refused", "public test #0")
    assert Problem.objects.get(origin_id="wrong").reference_solution == ""


def test_a_refused_replacement_leaves_the_stored_reference(records, tmp_path):
    _command("lcb", records, "--solutions", _good(tmp_path))
    wrong = _solutions(tmp_path, "wrong.jsonl", {w.ACRONYM_ID: w.ACRONYM_WRONG})

    out = _command("lcb", records, "--solutions", wrong, "--replace-references")

    assert _references()[w.ACRONYM_ID] == w.ACRONYM_OK
    assert "reference refused" in out and "the stored reference stays" in out


def test_a_humaneval_canonical_solution_is_verified_too():
    from evolution.importers.humaneval import packaged_path
    from evolution.importers.reading import iter_jsonl

    rows = [obj for _, obj in iter_jsonl(path=packaged_path())][:2]
    rows[1]["canonical_solution"] = "    return 0\n"

    report = import_seeds(source="humaneval", content="".join(json.dumps(r) + "\n" for r in rows))

    assert (report.created, report.with_reference) == (2, 1)
    (note,) = report.references
    assert (note.origin_id, note.action, note.test) == (
        "HumanEval/1",
        "refused",
        "private test assert #0",
    )
    good = Problem.objects.get(origin_id="HumanEval/0")
    assert good.reference_provenance == {
        "source": "record",
        "dataset": "humaneval",
        "tests_passed": "1/1",
    }


# --------------------------------------------------------------------------- provenance


def test_the_provenance_is_exported_and_shown_on_the_problem_and_admin_pages(records, tmp_path):
    _command("lcb", records, "--solutions", _good(tmp_path))
    problem = Problem.objects.get(origin_id=NEW_SCHEME_ID)
    expected = {
        "source": "solutions-file",
        "file": "solutions.jsonl",
        "line": 2,
        "tests_passed": "8/8",
    }
    assert problem.reference_provenance == expected

    lines = [json.loads(line) for line in export_problems(Problem.objects.all())]
    exported = next(line for line in lines if line["origin_id"] == NEW_SCHEME_ID)
    assert exported["reference_provenance"] == expected
    assert "reference_provenance" not in exported["metadata"]

    admin = get_user_model().objects.create_superuser("adm", password="pw")
    client = Client()
    client.force_login(admin)
    page = client.get(f"/problems/{problem.public_id}/").content.decode()
    assert "solutions file <code>solutions.jsonl</code>" in page
    assert "passed 8/8 of the record's tests at import" in page
    admin_page = client.get(f"/admin/evolution/problem/{problem.pk}/change/").content.decode()
    assert "solutions file solutions.jsonl, line 2" in admin_page


def test_a_project_jsonl_round_trip_keeps_the_provenance(records, tmp_path):
    _command("lcb", records, "--solutions", _good(tmp_path))
    text = "".join(export_problems(Problem.objects.all(), set_name="copy"))
    Problem.objects.all().delete()
    ProblemSet.objects.all().delete()

    report = import_seeds(source="jsonl", content=text)

    assert report.with_reference == 3
    assert Problem.objects.get(origin_id=w.ACRONYM_ID).reference_provenance["file"] == (
        "solutions.jsonl"
    )


def test_the_migration_moves_the_provenance_out_of_metadata():
    import importlib

    from django.apps import apps

    migration = importlib.import_module("evolution.migrations.0011_problem_reference_provenance")
    calibrated = Problem.objects.create(
        title="c",
        statement="s",
        harness="stdio",
        reference_solution="print(1)\n",
        origin_dataset="livecodebench",
        origin_id="c1",
        metadata={"platform": "x", "reference_provenance": {"source": "calibration", "attempt": 0}},
    )
    dataset = Problem.objects.create(
        title="d",
        statement="s",
        harness="stdio",
        reference_solution="print(2)\n",
        origin_dataset="codecontests",
        origin_id="d1",
    )
    without = Problem.objects.create(title="n", statement="s", harness="stdio", origin_id="n1")

    migration.move_provenance(apps, None)

    calibrated.refresh_from_db()
    assert calibrated.metadata == {"platform": "x"}
    assert calibrated.reference_provenance == {"source": "calibration", "attempt": 0}
    dataset.refresh_from_db()
    assert dataset.reference_provenance == {"source": "record", "dataset": "codecontests"}
    without.refresh_from_db()
    assert without.reference_provenance == {}


def test_a_sandbox_that_cannot_run_a_reference_fails_the_import_and_writes_nothing(
    lcb_sample, monkeypatch, settings
):
    from evolution.importers import SeedImportError
    from evolution.sandbox import SandboxUnavailable, service

    def unavailable():
        raise SandboxUnavailable("no sandbox here")

    monkeypatch.setattr(service, "get_backend", unavailable)
    # No Redis broker: no sandbox workers to ask instead (see the next test).
    settings.BROKER_KIND = "filesystem"
    line = dict(lcb_sample, reference_solution=w.SHORT_SORT_OK + "# unseen\n")
    with pytest.raises(SeedImportError) as caught:
        import_seeds(source="lcb", content=json.dumps(line))
    assert caught.value.field == "reference_solution" and caught.value.line == 1
    assert "the sandbox could not run the reference of 1873_A" in str(caught.value)
    assert "no sandbox here" in str(caught.value)
    assert not Problem.objects.exists() and not ProblemSet.objects.exists()


def test_a_process_without_a_sandbox_has_the_references_judged_by_the_sandbox_workers(
    lcb_sample, monkeypatch
):
    """The Compose stack's web (the API) and default-queue worker (the admin page) have no
    sandbox: the references go to the sandbox queue as a distributed batch."""
    from evolution.importers import references
    from evolution.sandbox import batch

    asked = []
    local = batch.judge_many

    def judge_many(jobs, **options):
        asked.append(options)
        return local(jobs)  # stands in for the sandbox workers

    monkeypatch.setattr(references, "_sandbox_here", lambda: False)
    monkeypatch.setattr(batch, "judge_many", judge_many)
    line = dict(lcb_sample, reference_solution=w.SHORT_SORT_OK + "# distributed\n")

    report = import_seeds(source="lcb", content=json.dumps(line))

    assert asked == [{"distributed": True}]
    assert report.with_reference == 1
