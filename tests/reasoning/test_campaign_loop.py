"""The reasoning loop end to end against the loopback model server."""

from __future__ import annotations

import pytest

from evolution.models import Campaign, LLMCall
from evolution.services.campaigns import campaign_pause, campaign_resume
from evolution.streams.runner import advance, run_inline
from reasoning.models import ItemStatus, ReasoningCampaign, ReasoningItem, ResultLogEntry
from reasoning.services import item_override_score

from .helpers import World, fresh_question, key_cell, make_campaign, one_type, verdict

pytestmark = pytest.mark.django_db


def _three_runs_of_ten(fake_server):
    """1 type x 10 difficulties x 3 runs; the judges make the run scores 0.8, 0.6, 0.9."""
    world = World()
    pattern = [True] * 8 + [False] * 2 + [True] * 6 + [False] * 4 + [True] * 9 + [False]
    world.verdicts = list(pattern)
    fake_server.responder = world
    campaign = make_campaign(fake_server, reasoning_types=one_type(), runs=3)
    campaign = run_inline(campaign_id=campaign.pk)
    return campaign, ReasoningCampaign.objects.get(pk=campaign.pk)


def test_the_overall_ema_over_three_runs_is_the_documents_worked_example(fake_server):
    campaign, rc = _three_runs_of_ten(fake_server)
    assert campaign.state == "completed"
    runs = list(rc.runs.order_by("number"))
    assert [r.score for r in runs] == [pytest.approx(0.8), pytest.approx(0.6), pytest.approx(0.9)]
    assert [r.ema_after for r in runs] == [
        pytest.approx(0.8),
        pytest.approx(0.74),
        pytest.approx(0.788),
    ]
    assert rc.ema == pytest.approx(0.788)
    assert rc.run_count == 3
    assert rc.current_difficulty == 1  # the next run starts again at the first level
    assert rc.ema_by_reasoning_type == {"logical_deduction": pytest.approx(0.788)}
    # Difficulty 9 scored 0, 0, 1 across the runs: 0 -> 0 -> 0.3; difficulty 1 always 1.
    assert rc.ema_by_difficulty["9"] == pytest.approx(0.3)
    assert rc.ema_by_difficulty["1"] == pytest.approx(1.0)
    assert rc.items.count() == 30
    report = runs[2].report
    assert "Overall EMA (alpha = 0.3): 0.788" in report
    assert report.count("**Question**") == 10
    assert ResultLogEntry.objects.filter(reasoning=rc, event="item_scored").count() == 30
    assert ResultLogEntry.objects.filter(reasoning=rc, event="run_finished").count() == 3


def test_the_three_roles_use_their_own_sampling_settings(fake_server):
    fake_server.responder = World()
    campaign = make_campaign(
        fake_server,
        reasoning_types=one_type(),
        difficulty_end=1,
        answering_temperature=0.1,
        answering_max_tokens=99,
    )
    run_inline(campaign_id=campaign.pk)
    by_role = {r.headers["x-benchforge-role"]: r.body for r in fake_server.requests}
    assert (by_role["generation"]["temperature"], by_role["generation"]["max_tokens"]) == (0.8, 500)
    assert (by_role["answering"]["temperature"], by_role["answering"]["max_tokens"]) == (0.1, 99)
    assert (by_role["evaluation"]["temperature"], by_role["evaluation"]["max_tokens"]) == (0.3, 250)


def test_items_are_made_in_round_robin_order(fake_server):
    world = World()
    fake_server.responder = world
    types = [
        {"name": "alpha_type", "description": "first"},
        {"name": "beta_type", "description": "second"},
    ]
    campaign = make_campaign(
        fake_server, reasoning_types=types, difficulty_start=2, difficulty_end=3, num_questions=2
    )
    run_inline(campaign_id=campaign.pk)
    made = list(
        ReasoningItem.objects.filter(reasoning_id=campaign.pk)
        .order_by("id")
        .values_list("difficulty", "reasoning_type", "question_index", "position")
    )
    expected = [(d, t, q) for d in (2, 3) for t in ("alpha_type", "beta_type") for q in range(2)]
    assert [m[:3] for m in made] == expected
    assert [m[3] for m in made] == list(range(8))
    generated = [key_cell(k) for role, k in world.keys if role == "generation"]
    assert generated[:3] == [
        "run=1;d=2;type=alpha_type;q=0",
        "run=1;d=2;type=alpha_type;q=1",
        "run=1;d=2;type=beta_type;q=0",
    ]


def test_a_question_too_similar_to_a_prior_one_is_regenerated_and_the_similarity_recorded(
    fake_server,
):
    first = "A train leaves Lisbon at 9:00 and travels 120 km at 60 km/h. When does it arrive?"
    copy = "A train leaves Lisbon at 9:00 and travels 180 km at 60 km/h. When does it arrive?"
    fake_server.script("generation", [first, copy, fresh_question(7)])
    fake_server.responder = World()
    campaign = make_campaign(
        fake_server, reasoning_types=one_type(), difficulty_end=2, novelty_filter=True
    )
    run_inline(campaign_id=campaign.pk)
    one, two = ReasoningItem.objects.filter(reasoning_id=campaign.pk).order_by("difficulty")
    assert one.question == first and one.regenerations == 0
    assert two.question == fresh_question(7)
    assert two.regenerations == 1
    draft = two.rejected_drafts[0]
    assert draft["question"] == copy
    assert draft["similarity"] > 0.5
    assert draft["similar_to"] == one.pk
    assert two.similarity is not None and two.similarity <= 0.5
    # The retry's prompt names the rejected draft; the history hints are there too.
    prompts = [
        r.body["messages"][0]["content"]
        for r in fake_server.requests
        if r.headers["x-benchforge-role"] == "generation"
    ]
    assert "Avoid repetition" in prompts[1] and "MORE DIFFICULT" in prompts[1]
    assert "previous draft was rejected" in prompts[2] and "180 km" in prompts[2]


def test_a_cell_without_a_novel_question_within_the_bound_is_filtered_not_answered(fake_server):
    first = "A train leaves Lisbon at 9:00 and travels 120 km at 60 km/h. When does it arrive?"
    fake_server.script("generation", [first] + [first] * 3)
    fake_server.responder = World()
    campaign = make_campaign(
        fake_server,
        reasoning_types=one_type(),
        difficulty_end=2,
        max_regenerations=2,
        novelty_filter=True,
    )
    run_inline(campaign_id=campaign.pk)
    item = ReasoningItem.objects.get(reasoning_id=campaign.pk, difficulty=2)
    assert item.status == ItemStatus.FILTERED
    assert len(item.rejected_drafts) == 3
    assert all(d["similarity"] == 1.0 for d in item.rejected_drafts)
    answered = [r for r in fake_server.requests if r.headers["x-benchforge-role"] == "answering"]
    assert len(answered) == 1  # only the first, novel question was answered
    rc = ReasoningCampaign.objects.get(pk=campaign.pk)
    assert "2" not in rc.ema_by_difficulty  # nothing scored at level 2


def test_the_quality_filter_rejects_a_question_before_it_is_answered(fake_server):
    import json

    fake_server.script(
        "quality",
        [
            json.dumps({"verdict": "reject", "reason": "two answers are defensible"}),
            json.dumps({"verdict": "accept", "reason": "clear"}),
        ],
    )
    fake_server.responder = World()
    campaign = make_campaign(
        fake_server, reasoning_types=one_type(), difficulty_end=1, quality_filter=True
    )
    run_inline(campaign_id=campaign.pk)
    item = ReasoningItem.objects.get(reasoning_id=campaign.pk)
    assert item.status == ItemStatus.JUDGED
    assert item.regenerations == 1
    assert "two answers are defensible" in item.rejected_drafts[0]["reason"]
    assert item.quality["accepted"] is True


def test_a_judge_parse_failure_scores_zero_and_is_told_apart_from_incorrect(fake_server):
    world = World()
    world.verdicts = [None, False]  # prose, then a real "incorrect"
    fake_server.responder = world
    campaign = make_campaign(fake_server, reasoning_types=one_type(), difficulty_end=2)
    run_inline(campaign_id=campaign.pk)
    failed, wrong = ReasoningItem.objects.filter(reasoning_id=campaign.pk).order_by("difficulty")
    assert failed.score == 0.0 and wrong.score == 0.0
    assert failed.parse_failures == 1 and failed.verdicts[0]["parse_failure"] is True
    assert "no JSON object" in failed.verdicts[0]["reason"]
    assert wrong.parse_failures == 0 and wrong.verdicts[0]["parse_failure"] is False
    calls = LLMCall.objects.filter(campaign_id=campaign.pk, role="evaluation").order_by("id")
    assert [c.status for c in calls] == ["unparsable", "ok"]


@pytest.mark.parametrize(("rule", "expected"), [("majority", 1.0), ("mean", pytest.approx(2 / 3))])
def test_a_three_judge_ensemble_aggregates_and_shows_disagreement(fake_server, rule, expected):
    world = World()
    world.verdicts = [True, False, True]
    fake_server.responder = world
    campaign = make_campaign(
        fake_server,
        judges=3,
        reasoning_types=one_type(),
        difficulty_end=1,
        judge_aggregation=rule,
    )
    run_inline(campaign_id=campaign.pk)
    item = ReasoningItem.objects.get(reasoning_id=campaign.pk)
    assert item.judge_score == expected
    assert item.disagreement is True
    assert [v["score"] for v in item.verdicts] == [1.0, 0.0, 1.0]
    judge_keys = [k for role, k in world.keys if role == "evaluation"]
    assert [k.split(";judge=")[1].split(";")[0] for k in judge_keys] == ["0", "1", "2"]


def test_a_human_override_changes_the_ema(fake_server, personas):
    campaign, rc = _three_runs_of_ten(fake_server)
    run2_wrong = rc.items.filter(run__number=2, judge_score=0.0).order_by("position").first()
    item_override_score(
        item_id=run2_wrong.pk,
        score=1.0,
        reason="the judge misread the answer",
        user=personas.curator.user,
    )
    rc.refresh_from_db()
    runs = list(rc.runs.order_by("number"))
    assert runs[1].score == pytest.approx(0.7)
    assert runs[1].ema_after == pytest.approx(0.77)
    assert rc.ema == pytest.approx(0.3 * 0.9 + 0.7 * 0.77)
    assert rc.run_count == 3
    assert "score overridden by a curator" in runs[1].report
    entry = ResultLogEntry.objects.filter(reasoning=rc, event="score_overridden").get()
    assert entry.payload["judge_score"] == 0.0 and entry.payload["score"] == 1.0
    # Removing the override restores the judges' EMA.
    item_override_score(
        item_id=run2_wrong.pk, score=None, reason="undo", user=personas.curator.user
    )
    rc.refresh_from_db()
    assert rc.ema == pytest.approx(0.788)


def test_the_result_log_is_append_only():
    entry = ResultLogEntry(event="x", payload={})
    entry.pk = 1
    with pytest.raises(ValueError, match="append-only"):
        entry.save()


def test_a_paused_run_resumes_at_the_saved_difficulty_without_duplicates(fake_server):
    world = World()
    fake_server.responder = world
    types = [{"name": "alpha_type", "description": "a"}, {"name": "beta_type", "description": "b"}]
    campaign = make_campaign(fake_server, reasoning_types=types, difficulty_end=4)
    # Level 1: one step generates, answers and judges both items (one per type), one closes
    # the level; then level 2's items step.
    run_inline(campaign_id=campaign.pk, max_steps=3)
    rc = ReasoningCampaign.objects.get(pk=campaign.pk)
    assert rc.current_difficulty == 2 and rc.state_saved_at is not None
    assert rc.ema_by_difficulty.keys() == {"1"}
    level_one = list(rc.items.filter(difficulty=1).values_list("pk", "question"))
    campaign_pause(campaign_id=campaign.pk)
    assert advance(kind="reasoning", stream_id=campaign.pk).outcome == "skipped"
    campaign_resume(campaign_id=campaign.pk)
    Campaign.objects.filter(pk=campaign.pk).update(state="running")
    run_inline(campaign_id=campaign.pk)
    rc.refresh_from_db()
    assert Campaign.objects.get(pk=campaign.pk).state == "completed"
    assert list(rc.items.filter(difficulty=1).values_list("pk", "question")) == level_one
    assert rc.items.count() == 8
    assert [lvl["difficulty"] for lvl in rc.runs.get().levels] == [1, 2, 3, 4]
    assert world.generated == 8  # no question was generated twice


def test_a_judge_that_keeps_failing_marks_the_item_and_the_run_goes_on(fake_server):
    from tests.support.fake_openai import Fault

    fake_server.script("evaluation", [Fault.http_status(400)] * 3)
    fake_server.responder = World()
    campaign = make_campaign(fake_server, reasoning_types=one_type(), difficulty_end=2)
    campaign = run_inline(campaign_id=campaign.pk)
    assert campaign.state == "completed"
    first, second = ReasoningItem.objects.filter(reasoning_id=campaign.pk).order_by("difficulty")
    assert first.status == ItemStatus.ERROR and "judge failed 3 times" in first.status_reason
    assert second.status == ItemStatus.JUDGED


def test_a_verdict_helper_is_valid_json():
    import json

    assert json.loads(verdict(True))["score"] == "correct"
