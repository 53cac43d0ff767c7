"""Levels with evidence: a level gain needs the pass rate's Wilson upper bound to clear the
threshold; an unproven gain gets more panel attempts up to a cap, else it is not_harder with
the interval in the reason. One failure in eight is noise, not difficulty."""

from __future__ import annotations

import pytest

from evolution.benchevolver.demo import answers, pack
from evolution.benchevolver.demo.stories import sort_numbers
from evolution.benchevolver.services import campaign_create

from .helpers import KeyedResponder, build_world
from .test_scenarios import (
    SETTINGS,
    WRONG_DESC,
    advance_until_done,
    put,
    running,
    sort_seed_evolves_with_family,
)

pytestmark = pytest.mark.django_db(transaction=True)

SEED = "demo/sort-numbers"  # calibrates at 8/8: level 1


def _solver_answers(table: dict, programs_per_model: list[str], *, first_index: int) -> None:
    for model in pack.SOLVER_MODELS:
        for offset, program in enumerate(programs_per_model):
            put(
                table,
                SEED,
                "solver",
                f"round=1;model={model};attempt={first_index + offset}",
                answers.code(program),
            )


def _run(fake_server, table, **settings):
    fake_server.responder = KeyedResponder(table)
    seed_set, evolver, panel = build_world(fake_server, seeds=(SEED,))
    campaign = running(
        campaign_create(
            name="evidence",
            seed_set=seed_set,
            evolver=evolver,
            panel=panel,
            settings={**SETTINGS, "level_confidence": 0.95, **settings},
        )
    )
    lineage = advance_until_done(campaign.lineages.get())
    campaign.refresh_from_db()
    assert campaign.state == "running", campaign.state_reason
    return lineage.candidates.get(round=1)


def _one_wrong_in_eight(table: dict) -> None:
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=4)
    # One model misses once: 7 of 8 pass, a point estimate of 0.875 = level 2 over a level-1 seed.
    put(
        table,
        SEED,
        "solver",
        f"round=1;model={pack.SOLVER_MODELS[0]};attempt=3",
        answers.code(WRONG_DESC),
    )


def test_one_failure_in_eight_is_not_a_level_gain_after_more_attempts(fake_server):
    table = pack.responses()
    _one_wrong_in_eight(table)
    _solver_answers(
        table, [sort_numbers.DISTINCT_DESC] * 4, first_index=4
    )  # the extra attempts pass
    cand = _run(fake_server, table, max_panel_attempts=8)

    # The interval [0.53, 0.98] did not clear level 2, so the panel was asked 4 more times each.
    evidence = [e for e in cand.validation_ledger if e["step"] == "difficulty evidence"]
    assert evidence[0]["outcome"] == "more" and "7/8 pass" in evidence[0]["evidence"]
    assert (cand.passes, cand.attempts, cand.level) == (15, 16, 1)
    assert cand.decision == "not_harder"
    assert "15/16 pass, 95% Wilson interval [0.72, 0.99]" in cand.decision_reason


def test_at_the_attempt_cap_an_unproven_gain_is_not_harder_with_the_interval(fake_server):
    table = pack.responses()
    _one_wrong_in_eight(table)
    cand = _run(fake_server, table, max_panel_attempts=4)
    assert (cand.passes, cand.attempts, cand.level) == (7, 8, 2)
    assert cand.decision == "not_harder"
    assert "level 2 by point estimate" in cand.decision_reason
    assert "[0.53, 0.98] supports level 1, below the level 2 needed" in cand.decision_reason


def test_a_gain_the_interval_supports_is_accepted_without_more_attempts(fake_server):
    table = pack.responses()
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=1)  # 2 of 8 pass
    cand = _run(fake_server, table, max_panel_attempts=8)
    assert (cand.passes, cand.attempts) == (2, 8)
    assert cand.decision == "accepted"
    assert "Wilson interval [0.07, 0.59] supports level 3" in cand.judge_report["acceptance"]


def test_with_level_confidence_zero_the_point_estimate_decides_as_in_the_paper(fake_server):
    table = pack.responses()
    _one_wrong_in_eight(table)
    cand = _run(fake_server, table, level_confidence=0.0)
    assert (cand.passes, cand.attempts, cand.decision) == (7, 8, "accepted")


def test_by_default_the_paper_s_rule_decides_on_k_attempts_per_model(fake_server):
    """Algorithm 1, line 22, with Table 5's K = 4: one failure in eight is level 2 over a
    level-1 seed, accepted without more attempts and without an interval."""
    table = pack.responses()
    _one_wrong_in_eight(table)
    fake_server.responder = KeyedResponder(table)
    seed_set, evolver, panel = build_world(fake_server, seeds=(SEED,))
    settings = {
        k: v for k, v in SETTINGS.items() if k not in ("level_confidence", "max_panel_attempts")
    }
    campaign = running(
        campaign_create(
            name="paper-rule", seed_set=seed_set, evolver=evolver, panel=panel, settings=settings
        )
    )
    lineage = advance_until_done(campaign.lineages.get())
    cand = lineage.candidates.get(round=1)
    assert (cand.passes, cand.attempts, cand.level, cand.decision) == (7, 8, 2, "accepted")
    assert not [e for e in cand.validation_ledger if e["step"] == "difficulty evidence"]
    assert "Wilson" not in cand.judge_report["acceptance"]


def test_level_five_is_reached_within_its_own_attempt_cap(fake_server):
    """A gain of four levels over a level-1 seed needs level 5: 0/8 and 0/16 prove only level 4
    at 95%, so the panel is asked again until the level's own cap (35 attempts over the panel:
    18 per model here) proves it."""
    table = pack.responses()
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=0)
    _solver_answers(table, [WRONG_DESC] * 16, first_index=4)
    cand = _run(fake_server, table, accept_min_level_gain=4, max_panel_attempts=0)
    steps = [e for e in cand.validation_ledger if e["step"] == "difficulty evidence"]
    assert [e["outcome"] for e in steps] == ["more", "more", "more", "more", "enough"]
    assert "0/8 pass" in steps[0]["evidence"] and "supports level 4" in steps[0]["evidence"]
    assert (cand.passes, cand.attempts, cand.level) == (0, 36, 5)
    assert cand.decision == "accepted"
    assert (
        "0/36 pass, 95% Wilson interval [0.00, 0.10] supports level 5"
        in (cand.judge_report["acceptance"])
    )
