"""The difficulty estimate (B.3 done differently) of a finished X-Coder campaign from one
command, ``xcoder_difficulty``: over the demo (judge answers replayed from an authored
cassette, labelled so on the campaign page) and over a scripted campaign (live calls in the
campaign's ledger and budget), idempotent, its bad arguments refused by name."""

from __future__ import annotations

import io
import json
import re
import shlex
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from evolution.models import Campaign, LLMCall
from evolution.models.campaigns import CampaignState
from evolution.streams.runner import run_inline
from tests.evolution.measurement.helpers import make_panel
from xcoder.demo import difficulty_pack
from xcoder.demo.setup import xcoder_demo
from xcoder.models import SynthTask, TaskStatus

from .helpers import endpoint
from .test_difficulty import make, three_task_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "xcoder.md"


def _documented() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return [
        line.strip()
        for block in re.findall(r"```sh\n(.*?)```", text, re.S)
        for line in block.splitlines()
        if "xcoder_difficulty" in line
    ]


def _page(client, campaign_id: int) -> str:
    return client.get(reverse("xcoder:campaign_detail", args=[campaign_id])).content.decode()


def _section(page: str) -> str:
    return re.search(r'<section class="card" id="difficulty">(.*?)</section>', page, re.S).group(1)


def test_the_committed_difficulty_cassette_is_exactly_what_its_pack_writes(tmp_path):
    written = tmp_path / "difficulty_cassette.jsonl"
    assert difficulty_pack.write_cassette(written) == 2
    assert written.read_text() == difficulty_pack.CASSETTE.read_text()


@pytest.mark.django_db(transaction=True)
def test_the_documented_command_rates_the_demo_and_the_page_labels_them_replayed(
    personas, tmp_path
):
    campaign = xcoder_demo()
    client = personas.curator.client
    before = _section(_page(client, campaign.pk))
    assert 'id="difficulty-none"' in before
    assert f"python manage.py xcoder_difficulty --campaign {campaign.pk}" in before
    calls_before = LLMCall.objects.filter(campaign=campaign).count()
    made_before = Campaign.objects.get(pk=campaign.pk).calls_made

    (line,) = _documented()
    words = shlex.split(line)
    assert words[:3] == ["python", "manage.py", "xcoder_difficulty"]
    out = io.StringIO()
    call_command(*words[2:], stdout=out, stderr=io.StringIO())
    text = out.getvalue()
    assert "replayed answers" in text
    assert re.search(r"^\s+0\s+800\s+0\.50 .*\(replayed\)$", text, re.M), text
    assert re.search(r"^\s+1\s+1100\s+0\.50 .*\(replayed\)$", text, re.M), text
    assert "not computed (needs at least 3 varying pairs), n = 2" in text
    assert f"Shown on /xcoder/{campaign.pk}/#difficulty" in text

    # Every accepted task has its estimate, read from the authored answers by the stage.
    accepted = SynthTask.objects.filter(xcoder_id=campaign.pk, status=TaskStatus.ACCEPTED)
    assert accepted.count() == 2
    estimates = {t.index: t.difficulty for t in accepted}
    assert {i: e["rating"] for i, e in estimates.items()} == {0: 800, 1: 1100}
    assert {e["judge"] for e in estimates.values()} == {difficulty_pack.JUDGE}
    assert estimates[1]["rationale"].startswith("A standard fixed-size sliding window")
    assert (
        not SynthTask.objects.filter(xcoder_id=campaign.pk)
        .exclude(status=TaskStatus.ACCEPTED)
        .exclude(difficulty={})
        .exists()
    )
    # Two judge calls, replayed, in the campaign's ledger and counted against its budget.
    judged = LLMCall.objects.filter(campaign=campaign, role="xcoder_difficulty")
    assert judged.count() == 2 == judged.filter(status="ok", replayed=True).count()
    assert {c.pk for c in judged} == {e["call_id"] for e in estimates.values()}
    assert {c.template for c in judged} == {"xcoder/difficulty"}
    assert LLMCall.objects.filter(campaign=campaign).count() == calls_before + 2
    assert Campaign.objects.get(pk=campaign.pk).calls_made == made_before + 2

    section = _section(_page(client, campaign.pk))
    assert 'id="difficulty-replayed">replayed answers' in section
    assert section.count('<span class="badge replayed">replayed</span>') == 2
    assert re.search(r">800 <span class=\"badge replayed\">replayed</span></td><td>0.50", section)
    assert re.search(r">1100 <span class=\"badge replayed\">replayed</span></td><td>0.50", section)
    agreement = re.search(r'id="difficulty-agreement">(.*?)</p>', section, re.S).group(1)
    assert "Spearman rank correlation" in agreement and "not computed (n = 2 task(s)" in agreement
    assert "model-judged rating, not the document&#x27;s fine-tuned classifier" in section
    # The task page says so too.
    task_page = client.get(reverse("xcoder:task_detail", args=[campaign.pk, 0])).content.decode()
    assert 'id="difficulty-task-replayed"' in task_page

    # A rerun asks for nothing and changes nothing.
    target = tmp_path / "difficulty.json"
    call_command(*words[2:], "--json", str(target), stdout=io.StringIO(), stderr=io.StringIO())
    assert LLMCall.objects.filter(campaign=campaign).count() == calls_before + 2
    again = {t.index: t.difficulty for t in accepted.all()}
    assert again == estimates
    written = json.loads(target.read_text())
    assert (written["calls"], written["replayed"], written["n"]) == (0, True, 2)
    assert [(row["index"], row["rating"]) for row in written["tasks"]] == [(0, 800), (1, 1100)]


@pytest.mark.django_db(transaction=True)
def test_the_command_rates_a_finished_campaign_live_within_its_budget(personas, fake_server):
    endpoint(fake_server, "judge")
    panel = make_panel(fake_server, ["strong", "weak"])
    campaign = make(
        fake_server,
        three_task_table(),
        panel=panel,
        num_tasks=3,
        near_duplicate_threshold=1.0,
        measure_k=1,
    )
    campaign = run_inline(campaign_id=campaign.pk, max_steps=120)
    assert campaign.state == CampaignState.COMPLETED
    assert not LLMCall.objects.filter(campaign=campaign, role="xcoder_difficulty").exists()
    # The budget leaves room for two judge calls: the third is refused before it is sent, the
    # two answers are stored and the command names the budget.
    Campaign.objects.filter(pk=campaign.pk).update(budget_max_calls=campaign.calls_made + 2)
    with pytest.raises(CommandError, match="budget reached"):
        call_command(
            "xcoder_difficulty",
            "--campaign",
            str(campaign.pk),
            "--judge-endpoint",
            "judge",
            stdout=io.StringIO(),
        )

    def tasks():
        return SynthTask.objects.filter(xcoder_id=campaign.pk).order_by("index")

    assert sum(bool(t.difficulty) for t in tasks()) == 2
    assert LLMCall.objects.filter(campaign=campaign, role="xcoder_difficulty").count() == 2

    # With room for it, a rerun asks only for the missing one; the calibration is computed.
    Campaign.objects.filter(pk=campaign.pk).update(budget_max_calls=None)
    out = io.StringIO()
    call_command(
        "xcoder_difficulty", "--campaign", str(campaign.pk), "--judge-endpoint", "judge", stdout=out
    )
    assert "1 task(s) asked for; 1 model call(s) charged to the campaign" in out.getvalue()
    assert [t.difficulty["rating"] for t in tasks()] == [1200, 1900, 2600]
    calls = LLMCall.objects.filter(campaign=campaign, role="xcoder_difficulty")
    assert calls.count() == 3 and {c.endpoint_name for c in calls} == {"judge"}
    assert not calls.filter(replayed=True).exists()
    assert "replayed" not in out.getvalue()
    assert "Spearman's rho (judged rating vs measured pass@1): -1.000, n = 3" in out.getvalue()
    section = _section(_page(personas.curator.client, campaign.pk))
    assert "<b>-1.000</b> over n = 3 task(s)" in section
    assert "replayed" not in section
    task_page = personas.curator.client.get(reverse("xcoder:task_detail", args=[campaign.pk, 0]))
    assert 'id="difficulty-rating">1200' in task_page.content.decode()
    assert 'id="difficulty-task-replayed"' not in task_page.content.decode()


@pytest.mark.django_db
def test_bad_arguments_are_refused_by_name(fake_server):
    with pytest.raises(CommandError, match="no X-Coder campaign 999999"):
        call_command("xcoder_difficulty", "--campaign", "999999")
    with pytest.raises(CommandError, match="one of the arguments --campaign --demo is required"):
        call_command("xcoder_difficulty")
    with pytest.raises(CommandError, match="--demo: not allowed with argument --campaign"):
        call_command("xcoder_difficulty", "--campaign", "1", "--demo")
    campaign = make(fake_server, three_task_table())  # queued: not finished
    with pytest.raises(CommandError, match="no model endpoint 'nope'"):
        call_command(
            "xcoder_difficulty", "--campaign", str(campaign.pk), "--judge-endpoint", "nope"
        )
    with pytest.raises(CommandError, match=f"X-Coder campaign {campaign.pk} is queued"):
        call_command("xcoder_difficulty", "--campaign", str(campaign.pk))
    assert not LLMCall.objects.filter(campaign=campaign).exists()
