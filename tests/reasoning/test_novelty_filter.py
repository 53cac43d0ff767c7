"""The measured novelty filter is not in the design document: its novelty is the prompt's alone
(section 4.2) and its loop answers, judges and records every question it makes (sections 7 and
11). The filter is therefore off by default; turned on, the cells it leaves without a question
are shown and counted as unscored."""

from __future__ import annotations

import pytest

from evolution.streams.runner import run_inline
from reasoning.config import ReasoningSettings
from reasoning.models import ItemStatus, ReasoningItem, ReasoningRun

from .helpers import World, make_campaign, one_type

pytestmark = pytest.mark.django_db

TRAIN = "A train leaves Lisbon at 9:00 and travels 120 km at 60 km/h. When does it arrive?"


def test_the_filter_is_off_by_default_and_marked_as_the_projects_choice():
    assert ReasoningSettings().novelty_filter is False
    assert ReasoningSettings.source("novelty_filter") == "BenchForge"


def test_by_default_a_repeated_question_is_answered_and_scored_as_the_document_does(
    fake_server,
):
    fake_server.script("generation", [TRAIN, TRAIN])
    world = World()
    world.verdicts = [True, False]
    fake_server.responder = world
    campaign = make_campaign(fake_server, reasoning_types=one_type(), difficulty_end=2)
    assert run_inline(campaign_id=campaign.pk).state == "completed"
    one, two = ReasoningItem.objects.filter(reasoning_id=campaign.pk).order_by("difficulty")
    assert two.question == TRAIN and two.status == ItemStatus.JUDGED
    assert two.regenerations == 0 and two.rejected_drafts == []
    # Still measured and shown: the copy's similarity to the first question.
    assert two.similarity == 1.0 and two.similar_to_id == one.pk
    run = ReasoningRun.objects.get(reasoning_id=campaign.pk)
    assert run.score == pytest.approx(0.5)
    assert [level["unscored"] for level in run.levels] == [0, 0]
    assert run.reasoning.ema_by_difficulty == {"1": 1.0, "2": 0.0}
    generated = [r for r in fake_server.requests if r.headers["x-benchforge-role"] == "generation"]
    assert len(generated) == 2  # nothing was regenerated


def test_turned_on_its_filtered_cells_are_shown_and_counted_as_unscored(fake_server, personas):
    fake_server.script("generation", [TRAIN, TRAIN])
    fake_server.responder = World()
    campaign = make_campaign(
        fake_server,
        reasoning_types=one_type(),
        difficulty_end=2,
        novelty_filter=True,
        max_regenerations=0,
    )
    run_inline(campaign_id=campaign.pk)
    filtered = ReasoningItem.objects.get(reasoning_id=campaign.pk, difficulty=2)
    assert filtered.status == ItemStatus.FILTERED
    run = ReasoningRun.objects.get(reasoning_id=campaign.pk)
    assert [level["unscored"] for level in run.levels] == [0, 1]
    matrix = personas.curator.client.get(f"/reasoning/{campaign.pk}/charts.json").json()["matrix"]
    assert matrix["z"] == [[1.0, None]]
    assert matrix["counts"] == [[1, 0]] and matrix["unscored"] == [[0, 1]]
    page = personas.curator.client.get(f"/reasoning/{campaign.pk}/").content.decode()
    assert "<th>Unscored</th>" in page
    assert f'href="/reasoning/{campaign.pk}/items/?run=1">1</a>' in page
    report = run.report
    assert "not scored (filtered)" in report and "Questions: 2 (1 scored, 1 correct)" in report
