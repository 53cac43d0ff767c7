"""B.3 done differently: a judge model's Codeforces-style rating of each accepted task, read out
of messy answers, labelled with its method on the task page, and calibrated on the campaign
page against the panel's measured pass@1 (Spearman's rank correlation with n)."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from evolution.llm.parsing import ParseError
from evolution.models import Campaign, LLMCall
from evolution.models.campaigns import CampaignState
from evolution.streams.runner import run_inline
from tests.evolution.measurement.helpers import PanelAnswers, make_panel
from xcoder import kind, services
from xcoder.engine import difficulty
from xcoder.models import SynthTask, TaskStatus

from .helpers import (
    CORRECT,
    SCRIPTED_SETTINGS,
    STATEMENT,
    Responder,
    base_table,
    endpoint,
    seed_set,
    task_answer,
)

# --- the parser and the correlation -------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "rating"),
    [
        ('{"rating": 2100, "rationale": "two techniques"}', 2100),
        ('Sure!\n```json\n{"rating": "1,900", "rationale": "greedy"}\n```', 1900),
        ("<think>maybe 3000? no.</think>\nI would put it at **Rating:** ~1,650.", 1700),
        ("Codeforces rating of about 2400 (Div. 1 C).", 2400),
        ("I'd estimate somewhere between 1800 and 2000.", 1900),
        ("Hard to say; 2250 feels right given n <= 200000.", 2300),
        ("Difficulty: 4200", 3500),  # clamped to Codeforces' scale
        ('{"codeforces_rating": 950}', 1000),
    ],
)
def test_the_rating_is_read_out_of_messy_answers(answer, rating):
    parsed = difficulty.parse_rating(answer)
    assert parsed.rating == rating
    assert parsed.table10_bin in difficulty.TABLE10_BINS


@pytest.mark.parametrize(
    "answer", ["", "This is a medium problem.", '{"rating": 7}', "<think>2400</think> no idea"]
)
def test_an_answer_without_a_rating_is_a_parse_error(answer):
    with pytest.raises(ParseError):
        difficulty.parse_rating(answer)


def test_spearman_ranks_with_ties_and_needs_three_varying_pairs():
    assert difficulty.spearman([1200, 1900, 2600], [1.0, 0.5, 0.0]) == pytest.approx(-1.0)
    assert difficulty.spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    # Ties take the mean rank (scipy.stats.spearmanr gives 0.5 on these).
    assert difficulty.spearman([1, 2, 2, 3], [1, 3, 2, 2]) == pytest.approx(0.5)
    assert difficulty.spearman([1, 2], [2, 1]) is None
    assert difficulty.spearman([1, 2, 3], [0.5, 0.5, 0.5]) is None


# --- the stage in a campaign ----------------------------------------------------------------

TOWNS = ("Amberfield", "Birchwood", "Cedarholm")
# One judge answer per task, each messy in its own way: 1200, 1900, 2600.
JUDGE_ANSWERS = (
    '```json\n{"rating": "1,200", "rationale": "sort and take the k largest"}\n```',
    "<think>Is it 3000? No, a heap suffices.</think>\nI'd say **Rating: ~1900**.",
    "Somewhere between 2500 and 2700, the selection under tight limits is subtle.",
)
WRONG_EVERYWHERE = "```python\nprint(-1)\n```"
# Panel answers per task: both right, one right, none right -> pass@1 1.0, 0.5, 0.0.
PANEL = {
    TOWNS[0]: {"strong": CORRECT, "weak": CORRECT},
    TOWNS[1]: {"strong": CORRECT, "weak": WRONG_EVERYWHERE},
    TOWNS[2]: {"strong": WRONG_EVERYWHERE, "weak": WRONG_EVERYWHERE},
}


def three_task_table() -> dict:
    table = base_table(tasks=3)
    for index, town in enumerate(TOWNS):
        statement = STATEMENT.replace("The town of Brightwater", f"The town of {town}")
        assert statement != STATEMENT
        table[("xcoder_write", f"xcoder;task={index};write;style=codeforces;role=xcoder_write")] = (
            task_answer(statement, title=f"Lantern Festival of {town}")
        )
        table[("xcoder_difficulty", f"xcoder;task={index};difficulty;role=xcoder_difficulty")] = (
            JUDGE_ANSWERS[index]
        )
    return table


def make(fake_server, table, *, panel=None, **settings) -> Campaign:
    fake_server.responder = PanelAnswers(PANEL, fallback=Responder(table))
    campaign = services.xcoder_campaign_create(
        name="difficulty",
        seed_set=seed_set(),
        generator_endpoint=endpoint(fake_server, "generator"),
        solver_endpoints=[endpoint(fake_server, "solver-a"), endpoint(fake_server, "solver-b")],
        settings={"style_mix": {"codeforces": 100}, **SCRIPTED_SETTINGS, **settings},
        panel=panel,
    )
    Campaign.objects.filter(pk=campaign.pk).update(state=CampaignState.QUEUED)
    return campaign


@pytest.mark.django_db(transaction=True)
def test_accepted_tasks_are_rated_by_the_judge_and_calibrated_against_pass_at_1(
    personas, fake_server
):
    endpoint(fake_server, "judge")
    panel = make_panel(fake_server, ["strong", "weak"])
    campaign = make(
        fake_server,
        three_task_table(),
        panel=panel,
        num_tasks=3,
        near_duplicate_threshold=1.0,  # the three statements differ only in the town's name
        difficulty_estimate=True,
        difficulty_judge="judge",
        measure_k=1,
    )
    campaign = run_inline(campaign_id=campaign.pk, max_steps=120)
    assert campaign.state == CampaignState.COMPLETED
    tasks = list(SynthTask.objects.filter(xcoder=campaign.xcoder).order_by("index"))
    assert [t.status for t in tasks] == [TaskStatus.ACCEPTED] * 3, [t.reason for t in tasks]
    assert [t.difficulty["rating"] for t in tasks] == [1200, 1900, 2600]
    assert {t.difficulty["status"] for t in tasks} == {"ok"}
    assert {t.difficulty["judge"] for t in tasks} == {"judge"}
    assert tasks[0].difficulty["rationale"] == "sort and take the k largest"

    # One ledger entry per task, on the judge endpoint, with the prompt's name and version;
    # the judge saw the statement and nothing of the measurement.
    calls = LLMCall.objects.filter(campaign=campaign, role="xcoder_difficulty").order_by("id")
    assert calls.count() == 3
    assert {(c.endpoint_name, c.template, c.template_version) for c in calls} == {
        ("judge", "xcoder/difficulty", "1")
    }
    assert {c.id for c in calls} == {t.difficulty["call_id"] for t in tasks}
    # (The three calls go out side by side: the ledger's order is the order they were sent.)
    request = json.loads(calls.get(pk=tasks[0].difficulty["call_id"]).request_text)
    prompt = request["messages"][-1]["content"]
    assert "The town of Amberfield" in prompt and "pass@1" not in prompt

    # The task page shows the estimate with its method label.
    client = personas.curator.client
    page = client.get(reverse("xcoder:task_detail", args=[campaign.pk, 1])).content.decode()
    assert re.search(r'id="difficulty-rating">1900<', page)
    assert "model-judged rating, not the document&#x27;s fine-tuned classifier" in page

    # The campaign page shows the agreement with the measured pass@1: ratings 1200 / 1900 /
    # 2600 against pass@1 1.0 / 0.5 / 0.0 rank exactly opposite.
    page = client.get(reverse("xcoder:campaign_detail", args=[campaign.pk])).content.decode()
    agreement = re.search(r'id="difficulty-agreement">(.*?)</p>', page, re.DOTALL).group(1)
    assert "<b>-1.000</b> over n = 3 task(s)" in agreement
    assert "1.00 (2 attempts)" in page and "0.50 (2 attempts)" in page
    assert "0.00 (2 attempts)" in page


@pytest.mark.django_db(transaction=True)
def test_an_answer_without_a_rating_is_a_failed_estimate_and_the_task_stays_accepted(
    personas, fake_server
):
    table = base_table()
    table[("xcoder_difficulty", "xcoder;task=0;difficulty;role=xcoder_difficulty")] = (
        "It is a nice problem."
    )
    campaign = make(fake_server, table, num_tasks=1, difficulty_estimate=True)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=60)
    assert campaign.state == CampaignState.COMPLETED
    task = SynthTask.objects.get(xcoder=campaign.xcoder, index=0)
    assert task.status == TaskStatus.ACCEPTED
    assert (
        task.difficulty["status"] == "failed" and "no Codeforces-style" in task.difficulty["reason"]
    )
    assert task.difficulty["judge"] == "generator"  # no judge named: the generator rates
    call = LLMCall.objects.get(campaign=campaign, role="xcoder_difficulty")
    assert call.status == LLMCall.Status.UNPARSABLE
    page = personas.curator.client.get(reverse("xcoder:campaign_detail", args=[campaign.pk]))
    text = page.content.decode()
    assert "1 estimate(s) failed" in text and "not computed (n = 0" in text


@pytest.mark.django_db(transaction=True)
def test_the_estimate_is_off_by_default_and_asks_nothing(personas, fake_server):
    campaign = make(fake_server, base_table(), num_tasks=1)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=60)
    assert campaign.state == CampaignState.COMPLETED
    assert SynthTask.objects.get(xcoder=campaign.xcoder).difficulty == {}
    assert not LLMCall.objects.filter(role="xcoder_difficulty").exists()
    page = personas.curator.client.get(reverse("xcoder:campaign_detail", args=[campaign.pk]))
    assert "<code>difficulty_estimate</code> is off" in page.content.decode()


@pytest.mark.django_db
def test_an_unknown_judge_endpoint_is_refused_by_name(fake_server):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as err:
        make(fake_server, base_table(), difficulty_estimate=True, difficulty_judge="nobody")
    assert "difficulty_judge" in err.value.message_dict


@pytest.mark.django_db(transaction=True)
def test_a_failing_judge_pauses_the_campaign_and_a_given_up_estimate_is_a_failed_one(
    fake_server,
):
    # No judge answer is scripted: every rating call fails (HTTP 404), as an endpoint that
    # keeps failing does in any stage: the campaign pauses naming it, the task stays accepted.
    table = base_table()
    campaign = make(fake_server, table, num_tasks=1, difficulty_estimate=True)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=80)
    task = SynthTask.objects.get(xcoder=campaign.xcoder, index=0)
    assert task.status == TaskStatus.ACCEPTED and task.difficulty == {}
    assert campaign.state == CampaignState.PAUSED, campaign.state
    assert "generator" in campaign.state_reason, campaign.state_reason
    assert LLMCall.objects.filter(role="xcoder_difficulty", status=LLMCall.Status.ERROR).exists()

    # A step given up on (the runner's failure policy) stores a failed estimate, and the
    # campaign's work then moves past the stage instead of asking again.
    ctx = kind.load_context(campaign.pk)
    action = kind.action_for(ctx)
    assert (action.name, action.task_id) == ("difficulty", task.pk)
    assert kind.give_up(ctx, action, "difficulty failed 3 times: boom")
    task.refresh_from_db()
    assert task.difficulty["status"] == "failed" and "boom" in task.difficulty["reason"]
    assert kind.action_for(ctx).name == "finished"
