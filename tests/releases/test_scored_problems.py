"""Open-ended (scored) problems are measured by their verifier's score, never as pass@1: on the
public leaderboard (a model answering every problem with its reference solution keeps pass@1
100% over the pass/fail problems, and gets its mean score on the scored one in a column of its
own) and in the living loop (re-measurement, saturation, calibration, the gate of the next
version, the pages and their plots). Real PostgreSQL, the real sandbox, the loopback model
server (``living_support.Panel``: ``strong`` answers the sum every time, ``weak`` on samples
0-2 of 4, neither solves S2)."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from releases import calibration, leaderboard, living, services
from releases.leaderboard.board import build
from releases.leaderboard.stats import bootstrap_mean
from releases.models import (
    DifficultyPoint,
    LeaderboardRun,
    LeaderboardSample,
    PanelSeat,
    RunSource,
    SaturationFlag,
)
from review.models import Review
from tests.support.fake_openai import FakeOpenAI
from tests.support.scoring import as_scoring_service, complete

from .builders import SUM_CODE
from .living_support import Panel, endpoint
from .scored_world import REFERENCE_SCORE, scored_release

# The panel's answers to E-OPEN: weak 3 of 4 at 0.93 (the fourth prints 0: score 0), strong 4
# of 4 at 0.93.
PANEL_MEAN = 7 * REFERENCE_SCORE / 8


def public_get(url: str) -> str:
    response = Client().get(url)
    assert response.status_code == 200, url
    return response.content.decode()


def _ids(world) -> dict[str, str]:
    return {k: world.problem(k).public_id for k in ("E-OK", "E-OVERRIDE", "S2", "E-OPEN")}


# --- the public leaderboard -------------------------------------------------------------------


@pytest.fixture
def scored_tx(transactional_db):
    return scored_release()


def _reference_run(world, release) -> LeaderboardRun:
    """Every problem answered twice with its reference solution (the sum), judged for real."""
    content = "\n".join(
        json.dumps({"question_id": pid, "code_list": [SUM_CODE, SUM_CODE]})
        for pid in _ids(world).values()
    )
    run = leaderboard.run_create_from_upload(release=release, label="reference", content=content)
    run = leaderboard.run_execute(run_id=run.pk)
    assert run.state == "completed", run.error
    return run


def test_a_model_answering_every_reference_keeps_pass_at_1_full_and_scores_apart(
    scored_tx, personas
):
    world, release = scored_tx
    ids = _ids(world)
    assert release.items.count() == 4
    run = _reference_run(world, release)
    url = reverse("releases:public_leaderboard", args=[release.benchmark.slug, release.version])
    html = public_get(url)
    assert re.search(r'<td class="score pass1"><b>(.*?)</b>', html)[1] == "100.0%"
    assert re.search(r'<td class="score avg-k"><b>(.*?)</b>', html)[1] == "93.0%"
    assert "pass@1, pass@k and the breakdowns are over the 3 pass/fail problems" in html
    assert "1 open-ended problem is scored" in html

    board = build(release=release)
    [row] = board.rows
    assert row["pass1"]["value"] == 1.0 and row["pass1"]["n"] == 3
    assert row["avgk"]["value"] == pytest.approx(REFERENCE_SCORE)
    assert board.scored and board.pass_fail_problems == 3 and board.scored_problems == 1

    summary = run.summary
    # pass@1 and pass@k are over the three pass/fail problems: the reference passes them all.
    assert summary["pass"]["1"]["value"] == 1.0 and summary["pass"]["1"]["n"] == 3
    assert summary["pass"]["2"]["value"] == 1.0
    assert summary["pass_fail_problems"] == 3 and summary["scored_problems"] == 1
    assert all(e is None or e["value"] == 1.0 for e in summary["breakdown"]["origin"].values())
    [open_row] = [r for r in summary["per_item"] if r["public_id"] == ids["E-OPEN"]]
    assert open_row["scored"] is True and open_row["n"] == 2
    assert open_row["score"] == pytest.approx(REFERENCE_SCORE)
    assert all(v is None for v in open_row["pass"].values())
    assert summary["score"]["avg"]["2"]["value"] == pytest.approx(REFERENCE_SCORE)

    # The API gives the same figures, the scored one in its own fields.
    api = Client().get(f"/api/releases/{release.pk}/leaderboard").json()
    assert api[0]["pass1"]["value"] == 1.0
    assert api[0]["avgk"]["value"] == pytest.approx(REFERENCE_SCORE)

    # The run's own page shows the scored problem's mean score, not a pass count.
    page = personas.curator.client.get(reverse("releases:run_detail", args=[run.pk]))
    page = page.content.decode()
    assert "mean score 0.93 (2 answers)" in page
    assert f"<code>{ids['E-OPEN']}</code>" in page
    assert "0 / 2" not in page


def _old_summary(summary: dict, scored_ids: set[str], seed: int) -> dict:
    """``summary`` as run_summary wrote it before scored problems were set apart: their rows
    counted as judged samples none of which passed, and in pass@1 and the breakdowns."""
    old = json.loads(json.dumps(summary))
    for row in old["per_item"]:
        if row["public_id"] in scored_ids:
            row.pop("scored", None), row.pop("score", None)
            row["c"] = 0
            row["pass"] = {k: 0.0 for k in row["pass"]}
    old.pop("pass_fail_problems", None), old.pop("scored_problems", None)
    old["pass"] = {
        k: bootstrap_mean([r["pass"][k] for r in old["per_item"]], seed=seed).to_dict()
        for k in old["pass"]
    }
    return old


def test_a_run_summarised_before_scored_problems_were_set_apart_is_read_over_pass_fail(
    scored_tx, personas
):
    world, release = scored_tx
    ids = _ids(world)
    fresh = _reference_run(world, release)
    old = _old_summary(fresh.summary, {ids["E-OPEN"]}, fresh.bootstrap_seed)
    assert old["pass"]["1"]["value"] == 0.75  # what the board used to show
    # The same judged samples, completed with the summary as it was written then.
    earlier = LeaderboardRun.objects.create(
        release=release, source=RunSource.UPLOAD, label="stored-earlier", samples_per_problem=2
    )
    with as_scoring_service():
        LeaderboardSample.objects.bulk_create(
            LeaderboardSample(
                run=earlier,
                item_id=s.item_id,
                sample_index=s.sample_index,
                code=s.code,
                verdict=s.verdict,
                passed_tests=s.passed_tests,
                total_tests=s.total_tests,
                details=s.details,
            )
            for s in LeaderboardSample.objects.filter(run=fresh)
        )
    complete(earlier, old)
    rows = {r["model"]: r for r in build(release=release).rows}
    assert rows["stored-earlier"]["pass1"]["value"] == 1.0
    assert rows["stored-earlier"]["pass1"]["n"] == 3
    assert rows["stored-earlier"]["avgk"]["value"] == pytest.approx(REFERENCE_SCORE)
    assert rows["stored-earlier"]["pass1"] == rows["reference"]["pass1"]
    # Its page (curators) shows it summarised again from its samples; the stored one stays.
    page = personas.curator.client.get(reverse("releases:run_detail", args=[earlier.pk]))
    page = page.content.decode()
    assert 'id="resummarised"' in page and "mean score 0.93 (2 answers)" in page
    assert re.search(r'<div class="stat"><b><b>(.*?)</b>', page)[1] == "100.0%"
    earlier.refresh_from_db()
    assert earlier.summary == old


# --- the living loop --------------------------------------------------------------------------


def _remeasured(world, release):
    """``weak`` then ``weak`` and ``strong`` on the panel, each re-measuring inline."""
    with FakeOpenAI() as server:
        server.responder = Panel()
        for name in ("weak", "strong"):
            PanelSeat.objects.create(
                benchmark=release.benchmark, endpoint=endpoint(server, name), samples=4
            )
            r = living.remeasurement_create(
                benchmark=release.benchmark, trigger="panel_change", reason=f"{name} joined"
            )
            done = living.remeasurement_execute(remeasurement_id=r.pk)
            assert done.state == "completed", done.error
    return done


@pytest.fixture
def remeasured(transactional_db):
    world, release = scored_release()
    last = _remeasured(world, release)
    return world, release, last


def test_a_scored_problem_is_remeasured_as_its_mean_score_never_a_pass_rate(remeasured):
    world, release, last = remeasured
    ids = _ids(world)
    url = reverse(
        "releases:public_item", args=[release.benchmark.slug, release.version, ids["E-OPEN"]]
    )
    html = public_get(url)
    assert "mean score 0.81 (8 answers)" in html
    assert "pass@1 0.00" not in html and "(0/8)" not in html
    assert "open-ended problem has no pass@1" in html
    assert 'class="history-point saturated"' not in html
    figure = json.loads(re.search(r'id="history-figure"[^>]*>(.*?)</script>', html, re.S)[1])
    assert figure["data"][0]["y"] == pytest.approx([3 * REFERENCE_SCORE / 4, PANEL_MEAN], abs=1e-4)
    assert figure["layout"]["yaxis"]["title"]["text"] == "mean score over the panel"
    assert not figure["layout"].get("shapes")  # no saturation bound for a score
    assert "mean score" in figure["data"][0]["hovertemplate"]

    [first, second] = living.difficulty_history(release=release, public_id=ids["E-OPEN"])
    assert first.mean_score == pytest.approx(3 * REFERENCE_SCORE / 4) and first.samples == 4
    assert second.mean_score == pytest.approx(PANEL_MEAN) and second.samples == 8
    assert second.pass_at_1 is None and second.passes is None
    assert {m["label"]: m["score"] for m in second.models_detail} == pytest.approx(
        {"weak": 3 * REFERENCE_SCORE / 4, "strong": REFERENCE_SCORE}
    )
    # Pass/fail problems keep their pass@1.
    ok = living.difficulty_history(release=release, public_id=ids["E-OK"])[-1]
    assert (ok.passes, ok.samples, ok.mean_score) == (7, 8, None)


def test_a_scored_problem_is_kept_out_of_saturation_and_its_share(remeasured):
    world, release, last = remeasured
    ids = _ids(world)
    # Two pass/fail problems saturated (strong solves E-OK and E-OVERRIDE every time), out of
    # three that can be: the scored one is never flagged and never in the denominator.
    assert not SaturationFlag.objects.filter(public_id=ids["E-OPEN"]).exists()
    assert last.summary["saturated"] == 2
    args = [release.benchmark.slug, release.version]
    html = public_get(reverse("releases:public_leaderboard", args=args))
    assert "2 of 3 pass/fail problems saturated" in html
    assert "1 open-ended problem is scored, not passed: never flagged" in html
    living_html = public_get(reverse("releases:living", args=[release.benchmark.slug]))
    assert "2/3" in living_html and "2/4" not in living_html
    assert "Open-ended (scored) problems have no pass@1" in living_html
    share = living.saturation_share(release=release)
    assert (share["saturated"], share["problems"], share["scored"]) == (2, 3, 1)
    assert share["share"] == pytest.approx(2 / 3)
    data = living.benchmark_living(benchmark=release.benchmark)
    assert data["series"][-1]["share"] == pytest.approx(2 / 3)
    assert (last.summary["pass_fail_problems"], last.summary["scored_problems"]) == (3, 1)
    assert set(last.summary["newly_saturated"]) <= {ids["E-OK"], ids["E-OVERRIDE"]}


def test_calibration_leaves_a_scored_problem_out_of_the_pass_rate_comparison(remeasured, personas):
    world, release, _ = remeasured
    ids = _ids(world)
    # The experts find E-OPEN easy: with its "pass@1 0.00" it read as model-only hardness.
    Review.objects.filter(item__problem=world.problem("E-OPEN")).update(difficulty=1)
    cal = calibration.for_release(release=release)
    assert ids["E-OPEN"] not in {r.public_id for r in cal.rows}
    assert cal.scored == 1
    assert all(r.public_id != ids["E-OPEN"] for r in cal.disagreements)
    page = personas.curator.client.get(
        reverse("releases:release_calibration", args=[release.pk])
    ).content.decode()
    assert "1 open-ended (scored) problem left out" in page


def test_the_next_versions_gate_reads_no_pass_count_from_a_scored_remeasurement(remeasured):
    world, release, _ = remeasured
    ids = _ids(world)
    draft = services.release_next(release=release)
    gate = services.gate_run_create(release=draft)
    entries = {e["public_id"]: e for e in gate.report}
    facts = entries[ids["E-OPEN"]]["facts"]
    assert not facts["panel_attempts"]  # not "0/8 passes" from the re-measurement
    assert entries[ids["E-OK"]]["facts"]["panel_attempts"] == 8
    assert DifficultyPoint.objects.filter(public_id=ids["E-OPEN"]).count() == 2


def test_points_recorded_as_pass_rates_before_are_rewritten_as_mean_scores(remeasured):
    """Migration 0014 on points as re-measurements recorded them before: "pass@1 0.00 (0/n)"
    for the scored problem becomes the mean score of the same runs' answers."""
    import importlib

    from django.apps import apps

    world, release, _ = remeasured
    ids = _ids(world)
    fresh = {
        p.pk: (p.mean_score, p.samples, p.models_detail)
        for p in DifficultyPoint.objects.filter(public_id=ids["E-OPEN"])
    }
    assert len(fresh) == 2
    for pk, (_, samples, detail) in fresh.items():
        low, high = living.wilson_interval(0, samples)
        DifficultyPoint.objects.filter(pk=pk).update(
            mean_score=None,
            pass_at_1=0.0,
            low=low,
            high=high,
            passes=0,
            models_detail=[
                {"label": m["label"], "n": m["n"], "c": 0, "pass_at_1": 0.0} for m in detail
            ],
        )
    ok_before = list(DifficultyPoint.objects.filter(public_id=ids["E-OK"]).values())
    migration = importlib.import_module("releases.migrations.0014_difficulty_point_scores")
    migration.set_scores_apart(apps, None)
    for point in DifficultyPoint.objects.filter(public_id=ids["E-OPEN"]):
        mean, samples, detail = fresh[point.pk]
        assert point.mean_score == pytest.approx(mean)
        assert (point.samples, point.pass_at_1, point.passes) == (samples, None, None)
        got = sorted((m["label"], m["n"], m["score"]) for m in point.models_detail)
        assert got == [
            (label, n, pytest.approx(score))
            for label, n, score in sorted((m["label"], m["n"], m["score"]) for m in detail)
        ]
    assert list(DifficultyPoint.objects.filter(public_id=ids["E-OK"]).values()) == ok_before
