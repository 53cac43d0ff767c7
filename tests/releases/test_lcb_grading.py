"""The demo release's LiveCodeBench export, graded by LiveCodeBench's published rules.

The release is built the way ``make demo`` builds it (demo world, the completed demo
campaign on replayed responses, then the releases demo hook); ``tests/support/lcb_grading``
applies ``lcb_runner/evaluation/testing_util.py``'s rules to every reference solution.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from releases import exporters
from tests.support import lcb_grading

# The db mark makes pytest-django create the test database; the module fixture commits the
# demo release outside any test transaction and flushes it afterwards.
pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def _build_demo_release():
    from django.contrib.auth import get_user_model

    from evolution.demo import setup
    from evolution.models.campaigns import CampaignState
    from evolution.services.campaigns import campaign_launch
    from evolution.services.runner import campaign_run_inline
    from releases.demo import releases_demo
    from review.demo import review_demo_hook

    world = setup.demo_world()
    setup.demo_users()
    admin = get_user_model().objects.get(username="demo-admin")
    campaign = setup.demo_campaign(world, setup.COMPLETED_NAME, created_by=admin)
    campaign_launch(campaign_id=campaign.pk)
    campaign = campaign_run_inline(campaign_id=campaign.pk, workers=2)
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    review_demo_hook(world=world, stdout=io.StringIO(), admin=admin)
    release = releases_demo(world=world, stdout=io.StringIO(), admin=admin)
    assert release is not None
    return release


@pytest.fixture(scope="module")
def demo_export(django_db_setup, django_db_blocker):
    """(rows of the lcb export, {question_id: code_list}, manifest) of the demo release."""
    with django_db_blocker.unblock():
        try:
            release = _build_demo_release()
            rows = [
                json.loads(line)
                for line in exporters.export_bytes(release, "lcb").decode().splitlines()
            ]
            solutions = json.loads(exporters.export_bytes(release, "lcb_solutions"))
            manifest = exporters.export_manifest(release)
            items = release.item_count
        finally:
            # Committed outside a test transaction: leave the database as the next test expects.
            call_command("flush", interactive=False, verbosity=0)
    return rows, {s["question_id"]: s["code_list"] for s in solutions}, manifest, items


def test_every_reference_of_the_demo_release_passes_livecodebench_grading(demo_export):
    rows, solutions, manifest, items = demo_export
    assert len(rows) + len(manifest["lcb_skipped"]) == items
    kinds = set()
    for row in rows:
        problem = lcb_grading.load_row(row)
        sample = lcb_grading.evaluation_sample(problem)
        kinds.add("call-based" if sample["fn_name"] else "stdin")
        (code,) = solutions[row["question_id"]]
        results = lcb_grading.grade(sample, code)
        assert results == [True] * len(sample["inputs"]), (row["question_title"], results)
    # The demo release has both harnesses: both graders ran.
    assert kinds == {"call-based", "stdin"}


def test_call_based_rows_carry_leetcode_starter_code_and_clean_inputs(demo_export):
    rows, solutions, _, _ = demo_export
    functional = [r for r in rows if json.loads(r["metadata"]).get("func_name")]
    assert functional
    for row in functional:
        name = json.loads(row["metadata"])["func_name"]
        assert row["starter_code"].startswith("class Solution:\n")
        assert f"    def {name}(self" in row["starter_code"]
        assert row["platform"] == "leetcode"
        for test in lcb_grading.load_row(row)["public"]:
            assert not test["input"].endswith("\n")
            json.loads(test["output"])
        assert "class Solution" in solutions[row["question_id"]][0]


def test_the_grader_fails_what_livecodebench_fails(demo_export):
    rows, solutions, _, _ = demo_export
    row = next(r for r in rows if json.loads(r["metadata"]).get("func_name"))
    sample = lcb_grading.evaluation_sample(lcb_grading.load_row(row))
    code = solutions[row["question_id"]][0]
    # The defect the export had: a trailing newline on each functional input.
    broken = {**sample, "inputs": [i + "\n" for i in sample["inputs"]]}
    assert lcb_grading.grade(broken, code) == [-4]
    # A wrong return value fails the first test (the call-based grader records False).
    name = sample["fn_name"]
    wrong = code + f"\n\nclass Solution:\n    def {name}(self, *a):\n        return -12345\n"
    assert lcb_grading.grade(sample, wrong) == [False]
    stdin_row = next(r for r in rows if not json.loads(r["metadata"]).get("func_name"))
    stdin_sample = lcb_grading.evaluation_sample(lcb_grading.load_row(stdin_row))
    assert lcb_grading.grade(stdin_sample, "print('nope')\n") == [-2]


def test_stdin_grading_follows_the_published_comparison():
    sample = {"inputs": ["3\n1 2 3\n"], "outputs": ["6.0\n"], "fn_name": None}
    # Token-wise Decimal equality: 6 equals 6.0; extra blank lines at the end are stripped.
    assert lcb_grading.grade(
        sample, "n=int(input())\nprint(sum(map(int,input().split())))\n\n"
    ) == [True]
    main = "def main():\n    print(6)\n\nif __name__ == '__main__':\n    main()\n"
    assert lcb_grading.grade(sample, main) == [True]
    assert lcb_grading.grade(sample, "print(6)\nprint(7)\n") == [-2]
    assert lcb_grading.grade(sample, "raise ValueError('x')\n") == [-4]


def test_function_inputs_are_encoded_as_livecodebench_stores_them():
    assert exporters.lcb_function_input("[1.0, 2.0]\n1.5\n") == "[1.0, 2.0]\n1.5"
    assert exporters.lcb_function_input('["a","b"]\n\n') == '["a", "b"]'
    assert exporters.lcb_function_output("3\n") == "3"
    record = {
        "harness": "function",
        "entry_point": "count",
        "starter_code": "",
        "reference_solution": "def count(xs: list[int], t: float) -> int:\n    return 0\n",
    }
    assert exporters.lcb_starter_code(record) == (
        "class Solution:\n    def count(self, xs: list[int], t: float) -> int:\n        "
    )
