import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from evolution.importers import SeedImportError, import_seeds
from evolution.models import Problem, ProblemSet, TestCase

from .conftest import pack_private, pack_raw_pickle, write_lines

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[3]


def _record(sample: dict, **changes) -> str:
    return json.dumps({**sample, **changes})


def _snapshot():
    return (Problem.objects.count(), TestCase.objects.count(), ProblemSet.objects.count())


def test_the_real_sample_imports_as_a_stdio_problem_with_public_and_private_tests(lcb_sample_path):
    report = import_seeds(source="lcb", path=str(lcb_sample_path))

    assert (report.created, report.updated, report.unchanged) == (1, 0, 0)
    assert report.problem_set.name == "livecodebench"
    problem = Problem.objects.get(origin_dataset="livecodebench", origin_id="1873_A")
    assert problem.title == "A. Short Sort"
    assert problem.statement.startswith("There are three cards with letters")
    assert problem.harness == "stdio"
    assert problem.entry_point == ""
    assert problem.reference_solution == ""
    assert problem.origin_difficulty == "easy"
    assert problem.contest_date.isoformat() == "2023-08-21T00:00:00+00:00"
    assert problem.metadata == {"platform": "codeforces", "contest_id": "1873", "lcb_metadata": {}}

    public = list(problem.tests.filter(tier="public"))
    private = list(problem.tests.filter(tier="medium").order_by("ordinal"))
    assert [(t.hidden, t.input, t.output) for t in public] == [
        (False, "6\nabc\nacb\nbac\nbca\ncab\ncba\n", "YES\nYES\nYES\nNO\nNO\nYES\n")
    ]
    assert len(private) == 4
    assert all(t.hidden and t.provenance == {"source": "lcb-private"} for t in private)
    assert private[0].input == "1\nabc\n" and private[0].output == "YES\n"
    assert private[3].output == "YES\nYES\nYES\nYES\nYES\nYES\n"


def test_reimporting_the_same_question_creates_no_duplicate(lcb_sample_path):
    import_seeds(source="lcb", path=str(lcb_sample_path))
    report = import_seeds(source="lcb", path=str(lcb_sample_path))
    assert (report.created, report.updated, report.unchanged) == (0, 0, 1)
    assert Problem.objects.count() == 1
    assert TestCase.objects.count() == 5


def test_a_changed_question_is_updated_in_place(lcb_sample, lcb_sample_path):
    import_seeds(source="lcb", path=str(lcb_sample_path))
    public_id = Problem.objects.get().public_id
    report = import_seeds(source="lcb", content=_record(lcb_sample, difficulty="medium"))
    assert (report.created, report.updated, report.unchanged) == (0, 1, 0)
    problem = Problem.objects.get()
    assert (problem.public_id, problem.origin_difficulty) == (public_id, "medium")
    assert problem.tests.count() == 5


def test_it_accepts_parsed_public_tests_metadata_objects_and_plain_json_private_tests(lcb_sample):
    private = [{"input": "1\nabc\n", "output": "YES\n", "testtype": "stdin"}]
    lines = [
        _record(
            lcb_sample,
            question_id="as-objects",
            public_test_cases=json.loads(lcb_sample["public_test_cases"]),
            metadata={"note": "object"},
            private_test_cases=json.dumps(private),
        ),
        _record(lcb_sample, question_id="as-list", private_test_cases=private),
        _record(lcb_sample, question_id="pickled-list", private_test_cases=pack_private(private)),
    ]
    report = import_seeds(source="lcb", content="\n".join(lines), set_name="lcb-forms")

    assert report.created == 3
    for problem in Problem.objects.all():
        assert problem.tests.filter(tier="public").count() == 1
        assert [t.input for t in problem.tests.filter(tier="medium")] == ["1\nabc\n"]
    assert Problem.objects.get(origin_id="as-objects").metadata["lcb_metadata"] == {
        "note": "object"
    }


def test_a_question_with_func_name_becomes_a_function_problem(lcb_sample):
    tests = [{"input": "[2, 7, 11, 15]\n9", "output": "[0, 1]", "testtype": "functional"}]
    line = _record(
        lcb_sample,
        question_id="leet-1",
        platform="leetcode",
        starter_code="class Solution:\n    def twoSum(self, nums, target):\n        ",
        public_test_cases=json.dumps(tests),
        private_test_cases=pack_private(json.dumps(tests)),
        metadata=json.dumps({"func_name": "twoSum"}),
    )
    import_seeds(source="lcb", content=line)
    problem = Problem.objects.get()
    assert (problem.harness, problem.entry_point) == ("function", "twoSum")
    assert problem.starter_code.startswith("class Solution:")
    assert problem.tests.get(tier="public").input == "[2, 7, 11, 15]\n9"


def test_it_rejects_functional_tests_without_a_func_name(lcb_sample):
    tests = json.dumps([{"input": "1", "output": "1", "testtype": "functional"}])
    with pytest.raises(SeedImportError) as caught:
        import_seeds(source="lcb", content=_record(lcb_sample, public_test_cases=tests))
    assert (caught.value.line, caught.value.field) == (1, "metadata.func_name")


def test_bad_json_on_line_3_aborts_the_whole_import(lcb_sample, tmp_path):
    path = write_lines(
        tmp_path / "bad.jsonl",
        [
            _record(lcb_sample, question_id="ok-1"),
            _record(lcb_sample, question_id="ok-2"),
            '{"question_title": "broken", ',
        ],
    )
    before = _snapshot()
    with pytest.raises(SeedImportError) as caught:
        import_seeds(source="lcb", path=str(path))
    assert caught.value.line == 3
    assert str(caught.value).startswith("line 3: bad JSON")
    assert _snapshot() == before == (0, 0, 0)


def test_a_missing_question_content_is_named_and_nothing_is_written(lcb_sample, lcb_sample_path):
    import_seeds(source="lcb", path=str(lcb_sample_path))
    before = _snapshot()
    broken = {k: v for k, v in lcb_sample.items() if k != "question_content"}
    content = "\n".join(
        [_record(lcb_sample, question_id="fresh"), json.dumps({**broken, "question_id": "x"})]
    )
    with pytest.raises(SeedImportError) as caught:
        import_seeds(source="lcb", content=content)
    assert (caught.value.line, caught.value.field) == (2, "question_content")
    assert str(caught.value) == "line 2, field 'question_content': is missing"
    assert _snapshot() == before
    assert not Problem.objects.filter(origin_id="fresh").exists()


def test_a_pickle_that_would_execute_code_is_refused_and_never_runs(lcb_sample, tmp_path):
    marker = tmp_path / "pwned"
    payload = b"cos\nsystem\n(Vtouch " + str(marker).encode() + b"\ntR."
    content = "\n".join(
        [
            _record(lcb_sample, question_id="ok-1"),
            _record(lcb_sample, question_id="evil", private_test_cases=pack_raw_pickle(payload)),
        ]
    )
    with pytest.raises(SeedImportError) as caught:
        import_seeds(source="lcb", content=content)
    assert (caught.value.line, caught.value.field) == (2, "private_test_cases")
    assert "refused: pickle references a global (os.system)" in str(caught.value)
    assert not marker.exists()
    assert _snapshot() == (0, 0, 0)


@pytest.mark.parametrize(
    "changes, field, message",
    [
        (
            {"private_test_cases": "not base64 at all!"},
            "private_test_cases",
            "neither JSON nor base64",
        ),
        ({"private_test_cases": "aGVsbG8="}, "private_test_cases", "not valid zlib"),
        ({"public_test_cases": "[{"}, "public_test_cases", "not JSON"),
        ({"public_test_cases": [{"input": "1"}]}, "public_test_cases[0].output", "is missing"),
        (
            {"public_test_cases": [{"input": "1", "output": "1", "testtype": "interactive"}]},
            "public_test_cases[0].testtype",
            "must be one of stdin, functional",
        ),
        ({"metadata": "{oops"}, "metadata", "not JSON"),
        ({"contest_date": "yesterday"}, "contest_date", "not an ISO 8601"),
        ({"question_title": "  "}, "question_title", "must not be empty"),
    ],
)
def test_it_names_the_field_of_each_malformed_value(lcb_sample, changes, field, message):
    with pytest.raises(SeedImportError) as caught:
        import_seeds(source="lcb", content=_record(lcb_sample, **changes))
    assert caught.value.field == field
    assert message in caught.value.message


def test_a_question_repeated_in_one_file_is_an_error(lcb_sample):
    content = _record(lcb_sample) + "\n" + _record(lcb_sample)
    with pytest.raises(SeedImportError, match="already given on line 1") as caught:
        import_seeds(source="lcb", content=content)
    assert caught.value.line == 2


def test_an_empty_file_is_an_error_not_an_empty_set(tmp_path):
    path = write_lines(tmp_path / "empty.jsonl", [""])
    with pytest.raises(SeedImportError, match="holds no problems"):
        import_seeds(source="lcb", path=str(path))
    assert ProblemSet.objects.count() == 0


def test_the_set_option_names_the_problem_set(lcb_sample_path):
    call_command("import_seeds", "lcb", str(lcb_sample_path), "--set", "lcb-v6")
    assert ProblemSet.objects.get(name="lcb-v6").problems.count() == 1


def test_the_command_reports_the_line_and_exits_1(lcb_sample, tmp_path):
    path = write_lines(tmp_path / "bad.jsonl", [_record(lcb_sample), "{not json"])
    with pytest.raises(CommandError) as caught:
        call_command("import_seeds", "lcb", str(path))
    assert caught.value.returncode == 1
    assert "nothing was written: line 2: bad JSON" in str(caught.value)


def test_the_command_needs_a_file_for_lcb():
    with pytest.raises(CommandError, match="needs a FILE"):
        call_command("import_seeds", "lcb")


def test_manage_py_exits_nonzero_with_the_message_on_stderr(lcb_sample, tmp_path):
    """The real process, as an operator runs it: exit status and stderr, not an exception."""
    path = write_lines(
        tmp_path / "bad.jsonl",
        [_record(lcb_sample, question_id="a"), _record(lcb_sample, question_id="b"), "{oops"],
    )
    db = settings.DATABASES["default"]
    env = {
        **os.environ,
        "DATABASE_URL": (
            f"postgres://{quote(db['USER'])}:{quote(db['PASSWORD'])}@{db['HOST']}:{db['PORT']}"
            f"/{quote(db['NAME'])}"
        ),
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "import_seeds", "lcb", str(path)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "line 3: bad JSON" in result.stderr
    assert result.stdout == ""
    assert _snapshot() == (0, 0, 0)


def test_the_command_reads_a_solutions_file_keyed_by_question_id(lcb_sample_path):
    solutions = lcb_sample_path.parent / "lcb_sample_solutions.jsonl"
    call_command(
        "import_seeds", "lcb", str(lcb_sample_path), "--solutions", str(solutions), stdout=None
    )
    problem = Problem.objects.get(origin_id="1873_A")
    expected = json.loads(solutions.read_text(encoding="utf-8"))["solution"]
    assert problem.reference_solution == expected
    assert problem.reference_provenance == {
        "source": "solutions-file",
        "file": "lcb_sample_solutions.jsonl",
        "line": 1,
        "tests_passed": "5/5",
    }


def test_a_solutions_file_is_refused_for_other_sources(lcb_sample_path):
    with pytest.raises(SeedImportError) as info:
        import_seeds(source="humaneval", solutions_content='{"question_id": "x"}\n')
    assert info.value.field == "solutions"
