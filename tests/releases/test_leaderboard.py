"""Leaderboard evaluation over real HTTP (loopback model server) and the real sandbox."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from evolution.models import ModelEndpoint
from releases import leaderboard
from releases.models import LeaderboardSample, RunState
from tests.support.answers import fenced
from tests.support.fake_openai import FakeOpenAI
from tests.support.gate_rules import SELECTION_TIME_OK
from tests.support.scoring import as_scoring_service

from .builders import SUM_CODE, WRONG_CODE


class Scripted:
    """E-OK always right; E-OVERRIDE right on samples 0 and 1; S2 wrong, and its sample 3
    answers in prose (no code block)."""

    def __call__(self, body, headers):
        prompt = body["messages"][-1]["content"]
        key = headers.get("X-BenchForge-Key") or headers.get("x-benchforge-key", "")
        sample = int(key.rsplit("sample=", 1)[1])
        if "Task E-OK." in prompt:
            return fenced(SUM_CODE)
        if "Task E-OVERRIDE." in prompt:
            return fenced(SUM_CODE if sample < 2 else WRONG_CODE)
        if sample == 3:
            return "I believe the answer is to add the numbers."
        return fenced(WRONG_CODE)


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        fake.responder = Scripted()
        yield fake


def _endpoint(server, **kw) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name="model-x",
        provider="openai",
        base_url=server.base_url,
        model="model-x",
        concurrency_limit=4,
        timeout_s=30,
        max_retries=0,
        release_date=(timezone.now() - timedelta(days=1)).date(),
        **kw,
    )


def _ids(world):
    return {k: world.problem(k).public_id for k in ("E-OK", "E-OVERRIDE", "S2")}


def test_it_evaluates_an_endpoint_with_unbiased_pass_at_k_and_breakdowns(frozen_tx, server):
    world, release = frozen_tx
    run = leaderboard.run_create(release=release, endpoint=_endpoint(server), samples=4)
    run = leaderboard.run_execute(run_id=run.pk)
    assert run.state == RunState.COMPLETED, run.error
    assert server.request_count == 12
    s = run.summary
    per = {r["public_id"]: r for r in s["per_item"]}
    ids = _ids(world)
    assert (per[ids["E-OK"]]["c"], per[ids["E-OVERRIDE"]]["c"], per[ids["S2"]]["c"]) == (4, 2, 0)
    assert s["k"] == [1, 2, 4]
    # Hand-computed: per-problem pass@1 = 1, 1/2, 0; pass@2 = 1, 1 - 1/6, 0; pass@4 = 1, 1, 0.
    assert s["pass"]["1"]["value"] == pytest.approx(0.5)
    assert s["pass"]["2"]["value"] == pytest.approx((1 + 5 / 6) / 3)
    assert s["pass"]["4"]["value"] == pytest.approx(2 / 3)
    assert s["pass"]["1"]["low"] <= 0.5 <= s["pass"]["1"]["high"]
    assert s["breakdown"]["origin"]["evolved"]["value"] == pytest.approx(0.75)
    assert s["breakdown"]["origin"]["original"]["value"] == 0.0
    # Evolved problems carry their measured difficulty (3/8 and 4/8 of the panel pass:
    # medium), whatever their seed's label; the crafted seed keeps its dataset's "hard".
    assert s["breakdown"]["difficulty"]["medium"]["value"] == pytest.approx(0.75)
    assert s["breakdown"]["difficulty"]["hard"]["value"] == 0.0
    # The seed has no contest date: no date window vouches for it, so it is flagged.
    assert s["contamination"]["flagged_items"] == [ids["S2"]]
    assert s["contamination"]["clean_pass1"]["value"] == pytest.approx(0.75)
    verdicts = dict(
        LeaderboardSample.objects.filter(run=run, item__public_id=ids["S2"]).values_list(
            "sample_index", "verdict"
        )
    )
    assert verdicts == {0: "WA", 1: "WA", 2: "WA", 3: "NC"}


def test_a_rerun_does_only_what_is_missing(frozen_tx, server):
    world, release = frozen_tx
    run = leaderboard.run_create(release=release, endpoint=_endpoint(server), samples=2)
    ok_item = release.items.get(public_id=_ids(world)["E-OK"])
    with as_scoring_service():
        LeaderboardSample.objects.create(
            run=run, item=ok_item, sample_index=0, code=SUM_CODE, verdict=""
        )
    run = leaderboard.run_execute(run_id=run.pk)
    assert server.request_count == 5  # 3 items x 2 samples, one already answered
    assert LeaderboardSample.objects.filter(run=run).count() == 6
    assert LeaderboardSample.objects.get(run=run, item=ok_item, sample_index=0).verdict == "AC"
    again = leaderboard.run_execute(run_id=run.pk)
    assert server.request_count == 5 and again.summary == run.summary


def test_a_later_model_flags_items_created_before_its_release(frozen_tx, server):
    _, release = frozen_tx
    future = (timezone.now() + timedelta(days=30)).date()
    endpoint = _endpoint(server)
    endpoint.release_date = future
    endpoint.save()
    run = leaderboard.run_execute(
        run_id=leaderboard.run_create(release=release, endpoint=endpoint, samples=1).pk
    )
    assert run.summary["contamination"]["flagged"] == release.item_count
    assert run.summary["contamination"]["clean_pass1"] is None


def test_uploaded_solutions_are_judged_and_missing_problems_score_zero(frozen_tx):
    world, release = frozen_tx
    ids = _ids(world)
    content = "\n".join(
        [
            json.dumps({"question_id": ids["E-OK"], "code_list": [SUM_CODE, WRONG_CODE]}),
            json.dumps({"question_id": ids["E-OVERRIDE"], "output_list": [fenced(SUM_CODE)]}),
        ]
    )
    run = leaderboard.run_create_from_upload(release=release, label="external", content=content)
    run = leaderboard.run_execute(run_id=run.pk)
    assert run.state == RunState.COMPLETED, run.error
    per = {r["public_id"]: r for r in run.summary["per_item"]}
    assert (per[ids["E-OK"]]["n"], per[ids["E-OK"]]["c"]) == (2, 1)
    assert (per[ids["E-OVERRIDE"]]["n"], per[ids["E-OVERRIDE"]]["c"]) == (1, 1)
    assert run.summary["missing"] == 1
    assert run.summary["pass"]["1"]["value"] == pytest.approx((0.5 + 1 + 0) / 3)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "line 1: not JSON"),
        ('{"question_id": "nope", "code_list": ["x"]}', "not in this release"),
        ('{"question_id": "QID"}', "needs code_list or output_list"),
        ('{"question_id": "QID", "code_list": [1]}', "list of strings"),
        ("", "no solutions"),
    ],
)
def test_it_rejects_malformed_uploads_with_the_line(frozen, content, message):
    world, release = frozen
    content = content.replace("QID", world.problem("E-OK").public_id)
    with pytest.raises(ValidationError, match=message):
        leaderboard.run_create_from_upload(release=release, label="x", content=content)


def test_it_refuses_to_evaluate_a_draft(db, server):
    from releases import services

    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="Empty")
    draft = services.release_create(benchmark=bench)
    with pytest.raises(ValidationError, match="Freeze"):
        leaderboard.run_create(release=draft, endpoint=_endpoint(server))
