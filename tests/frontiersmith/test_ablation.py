"""The no-filter ablation (seed document 002): the same mutated candidates without the coarse
filter and the divergence selections, every candidate whose environment converges kept, beside
the filtered run on the campaign page. What the filtered run computed is reused; the candidates
the filters removed are sampled, judged and built by the kind's own stages, their calls charged
to the arm campaign's ledger."""

from __future__ import annotations

import io
import json
import re
import shlex
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from evolution.models import Campaign, LLMCall
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_launch
from evolution.streams.runner import run_inline
from frontiersmith import ablation as A
from frontiersmith.demo import ablation_pack
from frontiersmith.models import (
    CandidateDecision,
    FrontierCampaign,
    FrontierCandidate,
    NoFilterAblation,
)
from tests.frontiersmith.helpers import make_campaign

# Roles asked before the build stage; every other role of a candidate is the build stage's.
BUILD_ROLES_EXCLUDED = ablation_pack.SELECTION_ROLES
DOC = Path(__file__).resolve().parents[2] / "docs" / "frontiersmith.md"


def _run(world, **overrides) -> FrontierCampaign:
    campaign = make_campaign(world, rounds=1, **overrides)
    campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk)
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    return FrontierCampaign.objects.get(pk=campaign.pk)


def _row(ablation: NoFilterAblation, index: int) -> dict:
    (row,) = [r for r in ablation.candidates if r["index"] == index]
    return row


@pytest.mark.django_db
def test_the_arm_keeps_a_candidate_the_coarse_filter_rejects(world, script):
    fc = _run(world)
    rejected = fc.candidates.get(round=1, index=2)
    assert rejected.decision == CandidateDecision.FILTERED_OUT and rejected.filter_passed is False
    assert not rejected.solutions and not rejected.tests
    calls_before = Campaign.objects.get(pk=fc.pk).calls_made
    seen_before = len(script.seen)

    ablation = A.no_filter_ablation(campaign_id=fc.pk)

    arm = ablation.arm
    twin = arm.candidates.get(round=1, index=2)
    # The filters are skipped: the rejected candidate was sampled, judged and built, and kept.
    assert twin.filter_passed is False and twin.decision == ""
    assert len(twin.solutions) == 3 and len(twin.pair_verdicts) == 3
    assert twin.tests and twin.execution_divergence > 0
    assert _row(ablation, 2)["no_filter"] == A.KEPT
    assert _row(ablation, 2)["filtered"] == CandidateDecision.FILTERED_OUT
    assert _row(ablation, 2)["answers"] == "asked by the arm"
    # The arm asked only for that candidate (the others' answers are the filtered run's), and
    # never the coarse filter: 3 solutions, 3 pair verdicts, and the build stage's calls,
    # the same as the filtered run's for #0 (the same knapsack, converged at once).
    asked = script.seen[seen_before:]
    built_0 = [
        r
        for r, key in script.seen[:seen_before]
        if ";c=0;" in key and r not in BUILD_ROLES_EXCLUDED
    ]
    assert built_0
    assert sorted(role for role, _ in asked) == sorted(["solve"] * 3 + ["pair_judge"] * 3 + built_0)
    assert all(";c=2;" in key for _, key in asked)
    # Every call went through the ledger, charged to the arm campaign, not the filtered one.
    assert LLMCall.objects.filter(campaign_id=arm.pk).count() == ablation.calls == len(asked)
    assert Campaign.objects.get(pk=arm.pk).calls_made == len(asked)
    assert Campaign.objects.get(pk=fc.pk).calls_made == calls_before
    assert arm.campaign.state == CampaignState.COMPLETED and not ablation.stopped
    # Both arms: the filtered run keeps its one accepted problem; without the filters the
    # three candidates whose environment converged are kept (#1's verifier never converges in
    # either arm).
    filtered, no_filter = ablation.summary["filtered"], ablation.summary["no_filter"]
    assert (filtered["kept"], no_filter["kept"]) == (1, 3)
    assert (filtered["entered_build"], no_filter["entered_build"]) == (3, 4)
    assert (filtered["converged"], no_filter["converged"]) == (2, 3)
    assert no_filter["build_yield"] == 0.75 and no_filter["kept_filter_rejected"] == 1
    assert _row(ablation, 1)["no_filter"] == CandidateDecision.NOT_CONVERGED
    accepted = fc.candidates.get(decision=CandidateDecision.ACCEPTED)
    assert filtered["execution_divergence"] == round(accepted.execution_divergence, 4)
    assert filtered["mean_score"] == round(A.mean_score(accepted), 4)
    kept = [c for c in arm.candidates.all() if c.tests]
    expected = sum(c.execution_divergence for c in kept) / 3
    assert no_filter["execution_divergence"] == round(expected, 4)
    # Nothing of the arm became a Problem; the arm is never launched (no round left).
    assert arm.output_set.problems.count() == 0
    assert arm.current_round == 2


@pytest.mark.django_db
def test_a_kept_candidate_without_execution_divergence_is_labelled_not_ranked(world):
    fc = _run(world)
    # #3 converged in the filtered run; make its divergence unmeasurable (one scored solution).
    low = fc.candidates.get(round=1, index=3)
    FrontierCandidate.objects.filter(pk=low.pk).update(
        score_matrix=low.score_matrix[:1], execution_divergence=None
    )
    ablation = A.no_filter_ablation(campaign_id=fc.pk)
    assert _row(ablation, 3)["no_filter"] == A.KEPT_UNMEASURED
    assert _row(ablation, 3)["execution_divergence"] is None
    no_filter = ablation.summary["no_filter"]
    assert no_filter["kept"] == 3 and no_filter["unmeasured_divergence"] == 1
    measured = [
        c.execution_divergence for c in ablation.arm.candidates.all() if c.tests and c.index != 3
    ]
    assert len(measured) == 2
    assert no_filter["execution_divergence"] == round(sum(measured) / 2, 4)


@pytest.mark.django_db
def test_the_page_offers_the_command_then_shows_both_arms(world, personas):
    fc = _run(world)
    client = personas.curator.client
    before = client.get(f"/frontiersmith/{fc.pk}/").content.decode()
    assert 'id="ablation-none"' in before
    assert f"python manage.py frontiersmith_ablation --campaign {fc.pk}" in before

    out = io.StringIO()
    call_command("frontiersmith_ablation", "--campaign", str(fc.pk), stdout=out)
    text = out.getvalue()
    assert "replayed" not in text
    assert re.search(r"kept\s+1\s+3\n", text)
    assert f"Shown on /frontiersmith/{fc.pk}/#ablation" in text

    page = client.get(f"/frontiersmith/{fc.pk}/").content.decode()
    assert 'id="ablation-arms"' in page and 'id="ablation-candidates"' in page
    assert 'id="ablation-replayed"' not in page
    assert re.search(
        r'data-measure="kept"><td>kept</td>\s*<td class="score">1</td>\s*'
        r'<td class="score">3</td>',
        page,
    )
    assert '<tr data-outcome="kept">' in page and "asked by the arm" in page
    assert "10.62" in page and "8.57" in page
    arm = NoFilterAblation.objects.get().arm
    arm_page = client.get(f"/frontiersmith/{arm.pk}/").content.decode()
    assert 'id="ablation-arm-of"' in arm_page

    with pytest.raises(CommandError, match="no FrontierSmith campaign 999999"):
        call_command("frontiersmith_ablation", "--campaign", "999999")
    with pytest.raises(CommandError, match="itself a no-filter ablation arm"):
        call_command("frontiersmith_ablation", "--campaign", str(arm.pk))
    with pytest.raises(CommandError, match="no model endpoint 'nope'"):
        call_command(
            "frontiersmith_ablation", "--campaign", str(fc.pk), "--solver-endpoint", "nope"
        )


@pytest.mark.django_db
def test_a_campaign_without_a_closed_round_is_refused(world):
    campaign = make_campaign(world, rounds=1)
    with pytest.raises(CommandError, match="no closed round yet"):
        call_command("frontiersmith_ablation", "--campaign", str(campaign.pk))
    assert not NoFilterAblation.objects.exists()


def test_the_committed_ablation_cassette_is_exactly_what_its_pack_writes(tmp_path):
    written = tmp_path / "ablation_cassette.jsonl"
    ablation_pack.write_cassette(written)
    assert written.read_text() == ablation_pack.CASSETTE.read_text()


def _documented() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return [
        line.strip()
        for block in re.findall(r"```sh\n(.*?)```", text, re.S)
        for line in block.splitlines()
        if "frontiersmith_ablation" in line
    ]


@pytest.mark.django_db(transaction=True)
def test_the_documented_command_runs_over_the_demo_and_the_page_shows_both_arms(personas):
    (line,) = _documented()
    words = shlex.split(line)
    assert words[:3] == ["python", "manage.py", "frontiersmith_ablation"]
    out, err = io.StringIO(), io.StringIO()
    call_command(*words[2:], stdout=out, stderr=err)
    text = out.getvalue()
    print(text)
    assert "replayed answers" in text
    ablation = NoFilterAblation.objects.get()
    fc = ablation.frontier
    assert fc.campaign.name == "Demo: FrontierSmith open-ended problems"
    # The arm asked only for the proposal the coarse filter rejects, from the authored
    # ablation cassette (every answer once), all replayed and in the ledger.
    calls = LLMCall.objects.filter(campaign_id=ablation.arm_id)
    assert calls.count() == ablation.calls == len(ablation_pack.answers())
    assert calls.filter(status="ok", replayed=True).count() == ablation.calls
    assert ablation.replayed
    filtered, no_filter = ablation.summary["filtered"], ablation.summary["no_filter"]
    assert (filtered["kept"], no_filter["kept"]) == (1, 3)
    assert no_filter["kept_filter_rejected"] == 1
    # The rejected proposal's authored solutions share one strategy: the judge calls every
    # pair the same, the score vectors are equal, and the kept set's divergence falls.
    row = _row(ablation, ablation_pack.REJECTED_INDEX)
    assert row["filter_passed"] is False and row["no_filter"] == A.KEPT
    assert row["judged_divergence"] == 0.0 and row["execution_divergence"] == 0.0
    assert no_filter["execution_divergence"] < filtered["execution_divergence"]
    assert no_filter["judged_divergence"] < filtered["judged_divergence"]
    assert ablation.elapsed_s < 60

    page = personas.curator.client.get(f"/frontiersmith/{fc.pk}/").content.decode()
    assert 'id="ablation-arms"' in page and 'id="ablation-replayed"' in page
    assert "replayed answers" in page


@pytest.mark.django_db
def test_the_command_takes_other_endpoints_for_the_arm_and_writes_json(world, tmp_path):
    fc = _run(world)
    target = tmp_path / "ablation.json"
    call_command(
        "frontiersmith_ablation",
        "--campaign",
        str(fc.pk),
        "--solver-endpoint",
        "mutator",
        "--json",
        str(target),
        stdout=io.StringIO(),
    )
    ablation = NoFilterAblation.objects.get()
    assert ablation.arm.solver_endpoint.name == "mutator"
    assert ablation.arm.mutator_endpoint_id == fc.mutator_endpoint_id
    # The arm's solutions and environment came from the endpoint it was given.
    arm_calls = LLMCall.objects.filter(campaign_id=ablation.arm_id)
    assert set(arm_calls.filter(role="solve").values_list("endpoint_name", flat=True)) == {
        "mutator"
    }
    written = json.loads(target.read_text())
    assert written["ablation"] == ablation.pk and written["arm"] == ablation.arm_id
    assert written["summary"]["no_filter"]["kept"] == 3
    assert [row["index"] for row in written["candidates"]] == [0, 1, 2, 3]
