"""A reasoning benchmark continued across campaigns (design document 004, sections 4.1, 6.1 and
9): the series keeps the EMAs, the prior questions and the run numbers from one campaign to the
next, as the document's state.json and runs.jsonl carry them from one invocation to the next.
Every model answer travels over the loopback server; EMAs are computed live."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from evolution.models import Campaign
from evolution.services.campaigns import campaign_cancel, campaign_resume
from evolution.streams.runner import run_inline
from reasoning.models import ReasoningCampaign, ReasoningRun, ReasoningSeries, RunStatus
from reasoning.services import item_override_score

from .helpers import World, key_cell, make_campaign, one_type

pytestmark = pytest.mark.django_db

# Section 4.1's worked example: one type x 10 difficulties, so a run's score is the share of
# correct verdicts among its ten items.
SCORE_08 = [True] * 8 + [False] * 2
SCORE_06 = [True] * 6 + [False] * 4
SCORE_09 = [True] * 9 + [False]


def _run(server, world: World, series: str, verdicts: list[bool], **settings) -> Campaign:
    world.verdicts = list(verdicts)
    campaign = make_campaign(server, series=series, reasoning_types=one_type(), **settings)
    return run_inline(campaign_id=campaign.pk)


def generation_prompts(server) -> list[tuple[str, str]]:
    """(cell of the replay key, prompt) of every generation request, in the order sent."""
    return [
        (key_cell(r.headers["x-benchforge-key"]), r.body["messages"][0]["content"])
        for r in server.requests
        if r.headers["x-benchforge-role"] == "generation"
    ]


def test_three_campaigns_of_one_series_follow_the_documents_worked_example(fake_server):
    """Each campaign is one invocation of the document's program with one run: the EMA goes
    0.8, 0.74, 0.788 across them (section 4.1), the run numbers 1, 2, 3; a campaign of
    another series starts from nothing."""
    world = World()
    fake_server.responder = world
    campaigns = [
        _run(fake_server, world, "worked example", verdicts)
        for verdicts in (SCORE_08, SCORE_06, SCORE_09)
    ]
    assert [c.state for c in campaigns] == ["completed"] * 3
    rcs = [ReasoningCampaign.objects.get(pk=c.pk) for c in campaigns]
    runs = [rc.runs.get() for rc in rcs]
    assert [r.number for r in runs] == [1, 2, 3]
    assert [r.score for r in runs] == [pytest.approx(0.8), pytest.approx(0.6), pytest.approx(0.9)]
    assert [rc.ema for rc in rcs] == [
        pytest.approx(0.8),
        pytest.approx(0.74),
        pytest.approx(0.788),
    ]
    # Each campaign started from the EMA the one before it left.
    assert [rc.series_start["ema"] for rc in rcs] == [None, pytest.approx(0.8), pytest.approx(0.74)]
    assert [rc.series_start["run_count"] for rc in rcs] == [0, 1, 2]
    series = ReasoningSeries.objects.get(name="worked example")
    assert {rc.series_id for rc in rcs} == {series.pk}
    assert series.ema == pytest.approx(0.788) and series.run_count == 3
    assert series.ema_by_reasoning_type == {"logical_deduction": pytest.approx(0.788)}
    # Difficulty 9 scored 0, 0, 1 across the three campaigns: 0 -> 0 -> 0.3.
    assert series.ema_by_difficulty["9"] == pytest.approx(0.3)
    assert series.ema_by_difficulty["1"] == pytest.approx(1.0)
    assert series.holder_id is None  # the last campaign finished: the series is free
    # The replay keys carry the series' run numbers.
    cells = [cell for cell, _ in generation_prompts(fake_server)]
    assert [c.split(";")[0] for c in cells[::10]] == ["run=1", "run=2", "run=3"]
    report = runs[2].report
    assert "- Series: worked example" in report and "- Completed runs: 3" in report
    assert "Overall EMA (alpha = 0.3): 0.788" in report

    lone = ReasoningCampaign.objects.get(pk=_run(fake_server, world, "", SCORE_06).pk)
    assert lone.series_id != series.pk
    assert lone.runs.get().number == 1 and lone.ema == pytest.approx(0.6)


def test_a_continuing_campaigns_generator_is_shown_the_series_earlier_questions(fake_server):
    """Section 4.2's novelty focus reads the questions of every earlier campaign of the series
    (section 9: "load prior questions for novelty from runs.jsonl"), and only of that series."""
    world = World()
    fake_server.responder = world
    first = _run(fake_server, world, "prior questions", [True, True], difficulty_end=2)
    asked = dict(
        ReasoningRun.objects.get(reasoning_id=first.pk)
        .items.order_by("difficulty")
        .values_list("difficulty", "question")
    )
    second = _run(fake_server, world, "prior questions", [True, True], difficulty_end=2)
    _run(fake_server, world, "somewhere else", [True], difficulty_end=1)
    prompts = generation_prompts(fake_server)
    continued = dict(p for p in prompts[2:4])
    level_one = continued["run=2;d=1;type=logical_deduction;q=0"]
    # The first campaign's question of the same cell: MUST be ENTIRELY NOVEL.
    assert "MUST be ENTIRELY NOVEL" in level_one and f"- {asked[1]}" in level_one
    # Its question of the other level: avoid repetition.
    assert "Avoid repetition" in level_one and f"- {asked[2]}" in level_one
    level_two = continued["run=2;d=2;type=logical_deduction;q=0"]
    assert f"- {asked[2]}" in level_two and "MORE DIFFICULT" in level_two
    # The measured similarity compares with them too: the nearest is the first campaign's.
    item = ReasoningRun.objects.get(reasoning_id=second.pk).items.get(difficulty=1)
    assert item.similar_to is not None and item.similar_to.reasoning_id == first.pk
    # Another series' campaign sees none of them.
    cell, elsewhere = prompts[4]
    assert cell == "run=1;d=1;type=logical_deduction;q=0"
    assert "This is the first logical_deduction question" in elsewhere
    assert asked[1] not in elsewhere


def test_one_campaign_of_a_series_runs_at_a_time(fake_server):
    """A second campaign of a series does not start a run while the first holds the series: it
    is paused with the reason, and continues the series once the first has finished."""
    world = World()
    fake_server.responder = world
    first = make_campaign(fake_server, series="busy", reasoning_types=one_type(), difficulty_end=2)
    run_inline(campaign_id=first.pk, max_steps=1)  # its first run started: it holds the series
    series = ReasoningSeries.objects.get(name="busy")
    assert series.holder_id == first.pk
    second = make_campaign(fake_server, series="busy", reasoning_types=one_type(), difficulty_end=2)
    second = run_inline(campaign_id=second.pk)
    assert second.state == "paused"
    assert f"is being continued by campaign {first.name!r}" in second.state_reason
    assert not ReasoningRun.objects.filter(reasoning_id=second.pk).exists()
    assert run_inline(campaign_id=first.pk).state == "completed"
    campaign_resume(campaign_id=second.pk)
    assert run_inline(campaign_id=second.pk).state == "completed"
    assert ReasoningRun.objects.get(reasoning_id=second.pk).number == 2
    series.refresh_from_db()
    assert series.run_count == 2 and series.holder_id is None
    # The database refuses a second run with a number the series already has.
    with pytest.raises(IntegrityError), transaction.atomic():
        ReasoningRun.objects.create(
            reasoning_id=second.pk, series=series, number=1, status=RunStatus.COMPLETED
        )


def test_a_cancelled_campaign_lets_the_series_go_and_keeps_what_it_saved(fake_server):
    """Cancelled mid-run, a campaign no longer holds its series: the next campaign starts from
    the level EMAs it saved (section 9's save point after each level) and its run number
    follows the unfinished run's."""
    world = World()
    world.verdicts = [True]
    fake_server.responder = world
    first = make_campaign(fake_server, series="cut", reasoning_types=one_type(), difficulty_end=3)
    run_inline(campaign_id=first.pk, max_steps=3)  # start, level 1's item, close level 1
    campaign_cancel(campaign_id=first.pk)
    second = _run(fake_server, world, "cut", [False, True, True], difficulty_end=3)
    assert second.state == "completed"
    rc = ReasoningCampaign.objects.get(pk=second.pk)
    assert rc.series_start["ema_by_difficulty"] == {"1": 1.0}
    assert rc.runs.get().number == 2
    # Level 1: 1.0 saved by the cancelled campaign, then 0.0: 0.3 x 0 + 0.7 x 1.0.
    assert rc.ema_by_difficulty["1"] == pytest.approx(0.7)
    assert rc.ema == pytest.approx(2 / 3)  # its run is the series' first finished one
    assert rc.series.run_count == 1


def test_an_override_in_an_earlier_campaign_moves_the_later_campaigns_ema(fake_server, personas):
    """A human override (section 12) recomputes the series' EMAs across its campaigns."""
    world = World()
    fake_server.responder = world
    first = _run(fake_server, world, "override", SCORE_08)
    second = _run(fake_server, world, "override", SCORE_06)
    wrong = ReasoningRun.objects.get(reasoning_id=first.pk).items.get(difficulty=9)
    item_override_score(
        item_id=wrong.pk, score=1.0, reason="the judge misread it", user=personas.curator.user
    )
    one = ReasoningCampaign.objects.get(pk=first.pk)
    two = ReasoningCampaign.objects.get(pk=second.pk)
    assert one.runs.get().score == pytest.approx(0.9) and one.ema == pytest.approx(0.9)
    assert two.runs.get().ema_after == pytest.approx(0.3 * 0.6 + 0.7 * 0.9)
    assert two.ema == pytest.approx(0.81) and two.series.ema == pytest.approx(0.81)
    assert two.series.run_count == 2
    assert two.ema_by_difficulty["9"] == pytest.approx(0.7)  # 1.0, then 0.0


def test_a_series_is_found_by_name_or_slug_and_a_new_one_never_takes_a_name_twice():
    from reasoning.services import series_create, series_get_or_create

    bench = series_get_or_create("My  Bench")
    assert (bench.name, bench.slug) == ("My Bench", "my-bench")
    assert series_get_or_create("my bench") == bench == series_get_or_create("my-bench")
    # A campaign without a series name gets a new series named after it, even if taken.
    other = series_create(name="My Bench")
    assert (other.name, other.slug) == ("My Bench (2)", "my-bench-2")
