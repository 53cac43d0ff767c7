"""Everything that reads the database ``make demo`` builds, in one module so it is built once
(``tests/support/demo_db.py``):

- the demo builds every capability, prints the logins, and a second run reuses what exists;
- the reasoning demo benchmark (two campaigns of one series) ran its planted stories on replayed
  responses, the second campaign continuing the first;
- every kind's campaign completed and its problems were reviewed and released, X-Coder's and
  EvoSyn's through the gate on their measured pass@1;
- no page of any kind prints a Python object dump (a dict or list printed with str() or pprint,
  a default ``<... object at 0x...>`` repr), crawled through every link an admin, a reviewer and
  an anonymous visitor can follow;
- the demo release's LiveCodeBench export is graded by LiveCodeBench's published rules
  (``tests/support/lcb_grading`` applies ``lcb_runner/evaluation/testing_util.py``'s rules to
  every reference solution).
"""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from evolution.demo import setup
from evolution.models import Campaign
from releases import exports
from tests.support import lcb_grading
from tests.support.crawl import crawl
from tests.support.demo_db import demo_build  # noqa: F401 (the module's fixture)

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def test_the_demo_builds_every_capability_and_prints_the_logins(demo_build):  # noqa: F811
    text = demo_build.stdout
    for username in ("demo-admin", "demo-curator", "demo-reviewer"):
        assert re.search(rf"{username}\s+password: \S+", text), text
    done = Campaign.objects.get(name=setup.COMPLETED_NAME)
    assert done.state == "completed" and done.replayed
    assert done.lineages.filter(candidates__decision="accepted").distinct().count() == 3
    resumable = Campaign.objects.get(name=setup.RESUMABLE_NAME)
    assert resumable.state == "paused"
    assert "Review round" in text and "published" in text
    _every_kind_is_reviewed_and_released()
    _the_leaderboard_has_every_demo_model_on_every_problem(text)


def _the_leaderboard_has_every_demo_model_on_every_problem(text: str) -> None:
    """The demo announced "leaderboard for demo-panel" while both runs had failed (no
    recorded answer for the other kinds' problems) and the public page said no model had been
    evaluated: each panel model now has a completed run with a judged sample of every item,
    and what the demo prints is what it checked."""
    from releases.demo import DEMO_BENCHMARK
    from releases.models import LeaderboardRun, Release

    release = Release.objects.get(benchmark__name=DEMO_BENCHMARK, state="published")
    items = release.items.count()
    models = []
    for member in setup.demo_world().panel.members.select_related("endpoint"):
        run = LeaderboardRun.objects.get(release=release, endpoint=member.endpoint)
        assert run.state == "completed", run.error
        judged = run.samples.exclude(verdict="IE")
        assert judged.values("item").distinct().count() == items
        # Every item answered by the answers recorded for it: a synthesized problem is no
        # longer keyed by its lineage's seed (which replayed the seed's answers to it).
        assert not run.samples.filter(details__has_key="llm_error").exists()
        passed = run.samples.filter(verdict="AC").count()
        models.append(f"{member.endpoint.model} {passed}/{run.samples.count()} samples passed")
    assert f"leaderboard for demo-panel: {', '.join(models)}." in text, text
    public = Client().get(
        reverse(
            "releases:public_leaderboard",
            args=[release.benchmark.slug, release.version],
        )
    )
    assert public.status_code == 200
    assert "No model has been evaluated" not in public.content.decode()


def _every_kind_is_reviewed_and_released() -> None:
    """Each kind's demo campaign completed, its problems are in the demo review round (rated)
    and in the published release; X-Coder's and EvoSyn's passed the gate on their measured
    pass@1, with no curator decision."""
    from evolution.measurement.models import Measurement
    from evolution.models import Problem
    from releases.demo import DEMO_BENCHMARK
    from releases.models import Release
    from review.demo import DEMO_ROUND
    from review.models import GroupItem

    for kind in ("xcoder", "evosyn", "frontiersmith", "reasoning"):
        campaigns = list(Campaign.objects.filter(kind=kind, name__startswith="Demo"))
        assert campaigns, kind
        for campaign in campaigns:  # the reasoning benchmark is two campaigns of one series
            assert campaign.state == "completed", (kind, campaign.state_reason)
            assert campaign.replayed
    reviewed = GroupItem.objects.filter(
        group__round__name=DEMO_ROUND, reviews__submitted_at__isnull=False
    ).values_list("problem__method", flat=True)
    assert {"benchevolver", "xcoder", "evosyn", "frontiersmith"} <= set(reviewed)
    release = Release.objects.get(benchmark__name=DEMO_BENCHMARK, state="published")
    released = Problem.objects.filter(pk__in=release.items.values("problem_id"))
    assert {"xcoder", "evosyn", "frontiersmith"} <= set(released.values_list("method", flat=True))
    run = release.gate_runs.latest("created_at")
    decided = set(release.decisions.values_list("problem_id", flat=True))
    for problem in released.filter(method__in=["xcoder", "evosyn"]):
        entry = next(e for e in run.report if e["problem_id"] == problem.pk)
        assert entry["passed"] and problem.pk not in decided, entry
        assert Measurement.objects.get(problem=problem).state == "completed"


def test_the_reasoning_demo_benchmark_ran_on_replayed_responses_across_two_campaigns(
    demo_build,  # noqa: F811
):
    """The reasoning demo: one series of three runs built by two campaigns, the second
    continuing the first, with its planted stories computed live (it is built by the same demo
    hook ``make demo`` runs, so it is checked here rather than built again)."""
    from reasoning.demo import pack
    from reasoning.demo import setup as reasoning_setup
    from reasoning.models import ItemStatus, ReasoningItem

    first = Campaign.objects.get(kind="reasoning", name=reasoning_setup.CAMPAIGN_NAME)
    second = Campaign.objects.get(kind="reasoning", name=reasoning_setup.CONTINUED_NAME)
    for campaign in (first, second):
        assert campaign.state == "completed", campaign.state_reason
        assert campaign.replayed
    one, two = first.reasoning, second.reasoning
    series = one.series
    assert series.name == reasoning_setup.SERIES_NAME and two.series_id == series.pk
    assert series.run_count == pack.RUNS and series.holder_id is None
    assert [r.number for r in one.runs.order_by("number")] == [1, 2]
    assert [r.number for r in two.runs.all()] == [3]
    runs = list(series.runs.order_by("number"))
    # The second campaign started from the state the first left.
    assert two.series_start["ema"] == pytest.approx(one.ema)
    assert two.series_start["run_count"] == 2
    assert two.ema == pytest.approx(series.ema) and series.ema == pytest.approx(runs[2].ema_after)
    assert runs[2].ema_after == pytest.approx(0.3 * runs[2].score + 0.7 * runs[1].ema_after)
    # Weak-area focus: from run 2 on, the two lowest-EMA types get a second question per cell
    # (run 3's, in the second campaign, from the series' EMAs).
    assert [sum(t["weak"] for t in r.plan) for r in runs] == [0, 2, 2]
    items = ReasoningItem.objects.filter(reasoning__series=series)
    assert items.filter(run__number=1).count() == 80
    assert items.filter(run__number=2).count() == 80 + 2 * 10
    # Planted stories, decided live: two copied drafts rejected for novelty, one draft rejected
    # by the quality filter, judge B's prose answers as parse failures, judge C's dissent.
    regenerated = items.filter(regenerations__gt=0)
    reasons = [d["reason"] for item in regenerated for d in item.rejected_drafts]
    assert sum("too similar" in r for r in reasons) == 2
    assert sum("quality filter" in r for r in reasons) == 1
    # Run 3's copy of a run-2 question is rejected in the second campaign against the first's.
    copied = two.items.get(
        run__number=3, difficulty=6, reasoning_type="mathematical_reasoning", question_index=0
    )
    near = copied.rejected_drafts[0]
    assert "too similar" in near["reason"]
    assert ReasoningItem.objects.get(pk=near["similar_to"]).reasoning_id == one.pk
    assert items.filter(parse_failures=1).count() == 2
    assert items.filter(disagreement=True).count() > 5
    assert not items.exclude(status=ItemStatus.JUDGED).exists()
    # Per item: one question, one quality verdict, one answer, three judges; plus the two
    # regenerated copies (a question each) and the quality rejection (a question and a verdict).
    assert items.count() == 280
    assert first.calls_made + second.calls_made == 280 * 6 + 2 + 2
    # The scripted answerer gets harder levels wrong more often: the EMA falls with difficulty.
    assert series.ema_by_difficulty["1"] > series.ema_by_difficulty["10"]
    assert all(r.report.startswith("# Self-evolving benchmark report") for r in runs)
    assert f"- Series: {series.name}" in runs[2].report


# Every kind of page the issue names, and the public ones: the crawl must reach each.
MUST_VISIT = {
    "demo-admin": {
        "evolution:campaign_detail",
        "evolution:lineage_detail",
        "evolution:candidate_detail",
        "evolution:problem_detail",
        "evolution:campaign_analytics",
        "xcoder:campaign_detail",
        "xcoder:task_detail",
        "evosyn:campaign_detail",
        "frontiersmith:campaign_detail",
        "frontiersmith:candidate_detail",
        "reasoning:campaign_detail",
        "reasoning:item_detail",
        "reasoning:series_detail",
        "review:round_detail",
        "releases:curate_detail",
        "releases:run_detail",
        "releases:public_item",
        "releases:public_leaderboard",
    },
    "demo-reviewer": {"review:queue", "review:group"},
    None: {"releases:public_detail", "releases:public_item", "releases:public_leaderboard"},
}


def test_no_page_of_any_kind_prints_a_python_object_dump(demo_build):  # noqa: F811
    for kind in ("evosyn", "frontiersmith"):
        assert Campaign.objects.get(kind=kind, name__startswith="Demo").state == "completed"
    users = get_user_model().objects
    for who, required in MUST_VISIT.items():
        client = Client()
        if who:
            client.force_login(users.get(username=who))
        found = crawl(client, ["/"], per_route=25, skip=("/logout", "/admin/", "/export/"))
        visited = set(found.pop("__visited__"))
        assert required <= visited, (who, sorted(required - visited))
        assert found == {}, (who, found)


@pytest.fixture(scope="module")
def demo_export(demo_build, django_db_blocker):  # noqa: F811
    """(rows of the lcb export, {question_id: code_list}, manifest, item count) of the demo
    release."""
    from releases.demo import DEMO_BENCHMARK
    from releases.models import Release

    with django_db_blocker.unblock():
        release = Release.objects.get(benchmark__name=DEMO_BENCHMARK, state="published")
        rows = [
            json.loads(line) for line in exports.export_bytes(release, "lcb").decode().splitlines()
        ]
        solutions = json.loads(exports.export_bytes(release, "lcb_solutions"))
        manifest = exports.export_manifest(release)
        items = release.item_count
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


def test_running_the_demo_again_reuses_what_exists(demo_build):  # noqa: F811
    """The fixture ran the demo command twice: every campaign exists once."""
    counts = demo_build.campaigns_after_rerun
    assert counts[("benchevolver", setup.COMPLETED_NAME)] == 1
    for kind in ("xcoder", "evosyn", "frontiersmith", "reasoning"):
        demo = {name: n for (k, name), n in counts.items() if k == kind and name.startswith("Demo")}
        # Reasoning's benchmark is two campaigns of one series.
        assert list(demo.values()) == [1] * (2 if kind == "reasoning" else 1), (kind, demo)
    assert all(n == 1 for n in counts.values()), counts
