"""A whole FrontierSmith campaign, two rounds, against the loopback model server and the real
sandbox: calibration of the coarse filter, the funnel with its drops, accepted problems fed
back into the seed pool, and no duplicate work when a step is replayed."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from evolution.models import Problem
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_launch
from evolution.streams.runner import run_inline
from frontiersmith import selectors
from frontiersmith.models import CandidateDecision, FrontierCampaign, FrontierCandidate
from frontiersmith.stages import select_final
from frontiersmith.stages.common import Action, load_context
from tests.frontiersmith.helpers import make_campaign

pytestmark = pytest.mark.django_db(transaction=False)


def run(campaign):
    campaign_launch(campaign_id=campaign.pk)
    return run_inline(campaign_id=campaign.pk)


def test_it_rejects_bad_settings_naming_each_key(world):
    with pytest.raises(ValidationError) as info:
        make_campaign(world, n_final=500, rounds=0, surprise=1)
    assert set(info.value.message_dict) == {"n_final", "rounds", "surprise"}


def test_a_campaign_runs_two_rounds_and_feeds_accepted_problems_back(world, script):
    campaign = run(make_campaign(world))
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    fc = FrontierCampaign.objects.get(pk=campaign.pk)

    # The coarse filter measured on the labelled sets: 1 of 3 closed accepted (TRICKY),
    # 1 of 2 open rejected (MURKY).
    rates = selectors.filter_rates(fc=fc)
    assert rates["false_positive"] == pytest.approx(1 / 3)
    assert rates["false_negative"] == pytest.approx(1 / 2)
    assert (rates["closed"], rates["open"]) == (3, 2)

    round1 = list(fc.candidates.filter(round=1).order_by("index"))
    assert [c.operator for c in round1] == [
        "change_goal",
        "restrict_outputs",
        "generalize_inputs",
        "change_goal",
    ]
    seed = fc.seed_pool.problems.order_by("id").first()
    assert all(c.parent_id == seed.pk for c in round1)
    decisions = [c.decision for c in round1]
    assert decisions == [
        CandidateDecision.ACCEPTED,
        CandidateDecision.NOT_CONVERGED,  # its verifier crashes on unparsable output, twice
        CandidateDecision.FILTERED_OUT,
        CandidateDecision.LOW_EXEC_DIVERGENCE,  # ties with #0, N_final = 1 keeps the first
    ]
    dropped = round1[1]
    assert dropped.build_attempts == 2
    assert "crashed" in dropped.build_ledger[-1]["problems"][0]
    good = round1[0]
    assert good.judged_divergence == 1.0  # the three strategies all differ
    assert len(good.score_matrix) == 3 and all(len(row) == 3 for row in good.score_matrix)
    assert good.execution_divergence > 0
    assert good.score_spread > 0

    accepted = good.accepted_problem
    assert accepted.kind == "synthesized" and accepted.method == "frontiersmith"
    assert accepted.comparison["mode"] == "score"
    assert accepted.comparison["verifier"] == good.verifier
    assert "## Scoring" in accepted.statement
    assert accepted.tests.count() == 3
    assert accepted.metadata["frontiersmith"]["operator"] == "change_goal"

    # Round 2 drew from the grown pool: proposal #3 mutates the round-1 problem, whose
    # formulation was carried over (no extraction call for it).
    round2 = {c.index: c for c in fc.candidates.filter(round=2)}
    assert round2[3].parent_id == accepted.pk
    assert round2[3].parent_formulation == good.formulation
    assert script.count("extract") == 1
    assert fc.seed_pool.problems.count() == 3  # the seed and one problem per round
    assert fc.output_set.problems.count() == 2

    funnel = selectors.funnel(fc=fc)
    assert funnel["total"] == {
        "proposed": 8,
        "parsed": 8,
        "passed_filter": 6,
        "kept_div": 6,
        "converged": 4,
        "accepted": 2,
        "build_yield": pytest.approx(4 / 6),
    }


def test_replaying_a_finished_step_never_duplicates_an_accepted_problem(world):
    campaign = make_campaign(world, rounds=1)
    campaign = run(campaign)
    fc = FrontierCampaign.objects.get(pk=campaign.pk)
    before = Problem.objects.filter(method="frontiersmith").count()
    # A redelivered "select_final" for round 1 (as if the worker died before its commit was
    # seen) finds the round closed and does nothing, however often it comes.
    FrontierCampaign.objects.filter(pk=fc.pk).update(current_round=1)
    for _ in range(2):
        select_final._select_final(load_context(fc.pk), Action("select_final"))
    assert Problem.objects.filter(method="frontiersmith").count() == before == 1
    assert FrontierCandidate.objects.filter(frontier=fc, decision="accepted").count() == 1


def test_final_selection_refuses_a_converged_candidate_without_execution_divergence(world):
    # A converged candidate whose execution divergence could not be measured (fewer than two
    # scored solutions) is never accepted, even when the round has room under N_final; the
    # reason says why, and nothing becomes a Problem.
    campaign = run(make_campaign(world, rounds=1))
    fc = FrontierCampaign.objects.get(pk=campaign.pk)
    kept = fc.candidates.get(round=1, decision=CandidateDecision.ACCEPTED)
    problems_before = Problem.objects.filter(method="frontiersmith").count()
    converged_before = selectors.round_funnel(fc=fc, number=1)["converged"]
    fc.rounds.filter(number=1).update(closed=False, closed_at=None)
    FrontierCampaign.objects.filter(pk=fc.pk).update(current_round=1)
    scored = kept.score_matrix[:1]
    FrontierCandidate.objects.filter(pk=kept.pk).update(
        stage="executed",
        decision="",
        decision_reason="",
        accepted_problem=None,
        score_matrix=scored,
        execution_divergence=None,
    )
    select_final._select_final(load_context(fc.pk), Action("select_final"))
    kept.refresh_from_db()
    assert kept.decision == CandidateDecision.UNMEASURED_DIVERGENCE
    assert kept.stage == "done"
    assert kept.accepted_problem_id is None
    assert kept.decision_reason.startswith("execution divergence not measured: 1 of ")
    assert f"1 of {len(kept.solutions)} sampled solution(s)" in kept.decision_reason
    # No new Problem was made from it.
    assert Problem.objects.filter(method="frontiersmith").count() == problems_before
    assert not fc.candidates.filter(round=1, decision=CandidateDecision.ACCEPTED).exists()
    # It converged all the same: the round's funnel still counts it among the converged.
    assert selectors.round_funnel(fc=fc, number=1)["converged"] == converged_before
