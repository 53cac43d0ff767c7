"""One campaign over the demo pack, driven through real HTTP against the loopback server.

The answers are the pack's authored responses; every outcome asserted below was computed by the
engine: programs executed in the sandbox, votes, repairs, panel verdicts and decisions.
"""

from __future__ import annotations

import pytest

from evolution.benchevolver.demo import pack
from evolution.benchevolver.engine import prompts
from evolution.benchevolver.models import Candidate, GlobalMemoryEntry, SolverAttempt
from evolution.benchevolver.services import campaign_create
from evolution.judging import prompts as platform_prompts
from evolution.models import Campaign, LLMCall, Problem
from evolution.services.campaigns import campaign_launch
from evolution.streams.runner import run_inline
from tests.support.fake_openai import FakeOpenAI

from .helpers import KeyedResponder, build_world, truncate_engine_tables
from .test_replay_decisions import campaign_decisions, replay_world

# Read-only tests over data the module fixture committed (the db mark also makes pytest-django
# create the test database for this module).
pytestmark = [pytest.mark.slow, pytest.mark.django_db]


@pytest.fixture(scope="module")
def run(django_db_setup, django_db_blocker):
    """Run the pack once (module scope: it takes a while) and hand every test the results."""
    with django_db_blocker.unblock():
        truncate_engine_tables()
        with FakeOpenAI() as server:
            responder = KeyedResponder(pack.responses())
            server.responder = responder
            seed_set, evolver, panel = build_world(server)
            campaign = campaign_create(
                name="pack",
                seed_set=seed_set,
                evolver=evolver,
                panel=panel,
                settings=pack.DEMO_SETTINGS,
            )
            campaign_launch(campaign_id=campaign.pk)
            campaign = run_inline(campaign_id=campaign.pk, workers=2)
            yield {"campaign": campaign, "server": server, "responder": responder}
        truncate_engine_tables()


@pytest.fixture(scope="module")
def replayed(run, django_db_blocker):
    """The pack again on replay endpoints reading its committed cassette (what `make demo`
    replays). Asked for by the module's last test only, so the others read the live run alone."""
    campaign = run["campaign"]
    with django_db_blocker.unblock():
        evolver, panel = replay_world("demo.jsonl", campaign.evolver, campaign.panel)
        second = campaign_create(
            name="pack replayed",
            seed_set=campaign.seed_set,
            evolver=evolver,
            panel=panel,
            settings=pack.DEMO_SETTINGS,
        )
        campaign_launch(campaign_id=second.pk)
        return run_inline(campaign_id=second.pk, workers=2)


def lineage_of(campaign: Campaign, origin_id: str):
    return campaign.lineages.get(seed__origin_id=origin_id)


def decisions(campaign: Campaign, origin_id: str) -> list[str]:
    return list(
        lineage_of(campaign, origin_id)
        .candidates.order_by("round")
        .values_list("decision", flat=True)
    )


def test_the_campaign_completes(run):
    campaign = Campaign.objects.get(pk=run["campaign"].pk)
    assert campaign.state == "completed", campaign.state_reason
    assert not campaign.lineages.filter(state="failed").exists()


def test_it_accepts_a_harder_evolution_and_evolves_it_again_from_the_new_parent(run):
    lineage = lineage_of(run["campaign"], "demo/array-sum")
    assert decisions(run["campaign"], "demo/array-sum") == ["accepted", "accepted"]
    first, second = lineage.candidates.order_by("round")
    assert lineage.seed_level == 1 and lineage.seed_passes == 8
    # Kadane: 3 of 8 panel attempts pass (the naive ones time out, one forgets all-negative arrays).
    assert (first.passes, first.attempts, first.level) == (3, 8, 4)
    assert first.error_pattern.get("TLE", 0) >= 1 and first.error_pattern.get("WA", 0) >= 1
    assert second.parent_id == first.accepted_problem_id
    child = second.accepted_problem
    assert child.parent_id == first.accepted_problem_id
    assert child.lineage_root_id == lineage.seed_id and child.lineage_depth == 2
    assert lineage.stop_reason.startswith("max_accepted_per_seed")


def test_accepted_problem_outputs_come_from_executing_the_evolved_solution(run):
    problem = lineage_of(run["campaign"], "demo/array-sum").candidates.get(round=1).accepted_problem
    public = list(problem.tests.filter(tier="public").order_by("ordinal"))
    assert [t.output.strip() for t in public] == ["7", "-1"]
    tiers = set(problem.tests.values_list("tier", flat=True))
    assert tiers == {"public", "small", "medium", "large", "stress"}
    seeds = {t.provenance.get("seed") for t in problem.tests.exclude(tier="public")}
    assert None not in seeds  # every hidden test records the generator seed that made it
    assert "```\n7\n```" in problem.statement  # the examples shown carry the executed outputs


def test_a_disagreeing_brute_force_is_repaired_then_the_candidate_is_accepted(run):
    cand = lineage_of(run["campaign"], "demo/pair-count").candidates.get(round=1)
    assert cand.decision == "accepted"
    steps = [(e["step"], e.get("outcome", ""), e.get("target", "")) for e in cand.validation_ledger]
    assert ("vote", "disagree: repair brute_force", "") in steps
    assert ("repair", "applied", "brute_force") in steps
    # Accepted: its contamination screen is the last entry (docs/screening.md).
    assert steps.pop()[0] == "contamination screen"
    assert steps[-3][:2] == ("vote", "agree") and steps[-2][:2] == ("hidden check", "agree")
    # Then the parent's reference is run on the new tests and the result recorded.
    assert steps[-1][0] == "parent check"
    hidden = cand.validation_ledger[-3]
    assert (
        hidden["infeasible"] >= 1
    )  # the quadratic brute force timed out on large tests: infeasible, not wrong
    assert cand.repairs_used == 1


def test_it_rejects_false_difficulty_flagged_by_the_judge(run):
    cand = lineage_of(run["campaign"], "demo/pair-count").candidates.get(round=2)
    assert cand.decision == "judge_rejected"
    assert "input format" in cand.decision_reason


def test_it_rejects_a_lexical_near_duplicate_before_asking_the_judge(run):
    cand = lineage_of(run["campaign"], "demo/pair-count").candidates.get(round=3)
    assert cand.decision == "duplicate"
    assert cand.judge_report["lexical"]["score"] >= 0.85
    assert not LLMCall.objects.filter(candidate=cand, role="judge").exists()


def test_it_rejects_a_candidate_when_repairs_run_out(run):
    cand = lineage_of(run["campaign"], "demo/sort-numbers").candidates.get(round=1)
    assert cand.decision == "invalid"
    assert "repair budget exhausted (3/3)" in cand.decision_reason
    repairs = [e for e in cand.validation_ledger if e["step"] == "repair"]
    assert [r["target"] for r in repairs] == ["reference"] * 3
    assert not SolverAttempt.objects.filter(candidate=cand).exists()  # never measured


def test_it_rejects_a_valid_candidate_that_is_not_harder(run):
    cand = lineage_of(run["campaign"], "demo/sort-numbers").candidates.get(round=2)
    assert cand.valid is True
    assert cand.decision == "not_harder"
    assert (cand.passes, cand.attempts) == (8, 8)
    assert "seed level 1 + required gain 1" in cand.decision_reason


def test_function_level_candidates_are_validated_by_statement_faithfulness(run):
    lineage = lineage_of(run["campaign"], "HumanEval/0")
    cand = lineage.candidates.get(round=1)
    # The evolved task keeps HumanEval's harness: the entry point and assertion-program tests.
    assert cand.harness == "assert" and cand.entry_point == "has_close_elements"
    assert all("def check(candidate)" in t["input"] for t in cand.tests)
    faith = [e for e in cand.validation_ledger if e["step"] == "faithfulness"]
    assert faith and faith[-1]["best"] == 1.0
    assert cand.decision == "accepted" and cand.level == 5
    assert lineage.stop_reason.startswith("accept_target_level")


def test_an_underspecified_statement_is_revised_until_faithful(run):
    cand = lineage_of(run["campaign"], "HumanEval/12").candidates.get(round=2)
    faith = [e for e in cand.validation_ledger if e["step"] == "faithfulness"]
    assert len(faith) == 2
    assert faith[0]["best"] < 0.5 <= faith[1]["best"]
    assert cand.spec_repairs == 1
    assert "lexicographically smallest" in cand.statement
    assert cand.decision == "not_harder"


def test_a_malformed_model_answer_is_a_recorded_error_and_the_lineage_goes_on(run):
    lineage = lineage_of(run["campaign"], "HumanEval/12")
    first = lineage.candidates.get(round=1)
    assert first.decision == "error"
    assert "mutator answer unparsable" in first.decision_reason
    # The call that made it is the candidate's, ledgered as answered but unreadable.
    call = first.llm_calls.get()
    assert (call.role, call.status) == ("mutator", "unparsable")
    assert call.error.startswith("mutator answer unparsable: no JSON object")
    assert "longest palindrome" in call.answer_text
    assert lineage.candidates.count() == 2  # the next round still ran
    assert lineage.stop_reason.startswith("no_improve_patience")


def test_a_seed_outside_the_allowed_levels_is_skipped(run):
    lineage = lineage_of(run["campaign"], "HumanEval/13")
    assert lineage.state == "skipped"
    assert (lineage.seed_passes, lineage.seed_attempts, lineage.seed_level) == (3, 8, 4)
    assert "outside allowed_seed_levels" in lineage.stop_reason


def test_nothing_is_duplicated_and_every_exchange_is_logged(run):
    campaign = run["campaign"]
    accepted = Candidate.objects.filter(lineage__campaign=campaign, decision="accepted")
    assert accepted.count() == Problem.objects.filter(kind="evolved").count() == 4
    assert GlobalMemoryEntry.objects.filter(campaign=campaign, accepted=True).count() == 4
    calls = LLMCall.objects.filter(campaign=campaign)
    assert calls.count() == len(run["responder"].seen)
    # Every exchange answered; the one malformed answer (HumanEval/12 R1's mutator) is
    # ledgered as unparsable, not ok.
    assert [c.role for c in calls.exclude(status="ok")] == ["mutator"]
    assert calls.filter(status="unparsable").count() == 1
    # Every call made for a candidate is filed under it, the proposal's included.
    assert not calls.filter(role__in=("mutator", "writer"), candidate__isnull=True).exists()
    campaign.refresh_from_db()
    assert campaign.calls_made == calls.count()

    # Every call names the version of the template file it was rendered from (the panel's
    # solver prompt is the platform's, shared with the measurement of every kind).
    def template(name):
        return (platform_prompts if name == "solver" else prompts).load(name)

    assert all(c.template_version == template(c.template).version for c in calls)
    assert {c.template_version for c in calls if c.template == "solver"} == {"2"}


def test_the_mutator_prompt_sees_lineage_and_global_memory(run):
    second = lineage_of(run["campaign"], "demo/array-sum").candidates.get(round=2)
    # The mutator said "dynamic programming over prefixes": stored as the vocabulary's tag.
    assert "accepted round 1: dynamic programming" in second.memory_context
    assert "Digest: accepted 1" in second.memory_context


# Last in the module: the replay commits a second campaign beside the live one.
def test_the_committed_cassette_replays_to_the_same_decisions(run, replayed):
    """The demo's cassette holds the pack's exchanges: a campaign on replay endpoints reading
    it computes every decision afresh (execution, votes, panel verdicts) and comes out with
    the live run's decisions."""
    first = run["campaign"]
    assert replayed.state == "completed", replayed.state_reason
    assert replayed.replayed
    assert campaign_decisions(replayed) == campaign_decisions(first)
    assert {"accepted", "judge_rejected", "duplicate", "not_harder", "error"} <= {
        d for _, _, d in campaign_decisions(first)
    }
