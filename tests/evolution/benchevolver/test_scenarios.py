"""Targeted engine scenarios with scripted answers over the loopback server, advanced one step
at a time with the same function the workers call."""

from __future__ import annotations

import pytest

from evolution.benchevolver.demo import answers, pack
from evolution.benchevolver.demo.stories import array_sum, sort_numbers
from evolution.benchevolver.models import Lineage
from evolution.benchevolver.services import campaign_create, lineage_advance
from evolution.models import Campaign
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_launch
from tests.support.fake_openai import CONTEXT_TOO_LONG, Fault

from .helpers import KeyedResponder, build_world

pytestmark = pytest.mark.django_db(transaction=True)

WRONG_DESC = (
    sort_numbers.SORT_REF
)  # prints every value ascending: wrong for "distinct, largest first"


def running(campaign: Campaign) -> Campaign:
    campaign_launch(campaign_id=campaign.pk)
    Campaign.objects.filter(pk=campaign.pk).update(state=CampaignState.RUNNING)
    return Campaign.objects.get(pk=campaign.pk)


def advance_until_done(lineage: Lineage, limit: int = 200) -> Lineage:
    for _ in range(limit):
        lineage.refresh_from_db()
        if lineage.state not in ("pending", "evolving"):
            return lineage
        report = lineage_advance(lineage_id=lineage.pk)
        assert report.outcome in ("done", "paused"), report
        if report.outcome == "paused":
            lineage.refresh_from_db()
            return lineage
    raise AssertionError("lineage did not finish")


def table_with(**overrides) -> dict:
    table = pack.responses()
    table.update(overrides)
    return table


def put(table: dict, seed: str, role: str, key: str, content: str) -> None:
    table[(role, f"seed={seed};{key};role={role}")] = content


def sort_seed_evolves_with_family(table: dict, family: str, *, passes_per_model: int) -> None:
    """sort-numbers R1: 'distinct values, largest first' with the given family name."""
    s = "demo/sort-numbers"
    put(
        table,
        s,
        "mutator",
        "round=1",
        answers.mutation(
            "Deduplicate and reverse.",
            "Parent keeps duplicates.",
            family,
            sort_numbers.DISTINCT_DESC,
        ),
    )
    put(
        table,
        s,
        "writer",
        "round=1",
        answers.written(
            "Distinct Values", sort_numbers.DISTINCT_DESC_STATEMENT, ["5\n3 1 3 2 1\n", "1\n7\n"]
        ),
    )
    put(table, s, "test_generator", "round=1;try=0", answers.code(array_sum.ARRAY_GENERATOR))
    put(table, s, "brute_force", "round=1;repair=0", answers.code(sort_numbers.DISTINCT_DESC_BRUTE))
    put(table, s, "oracle", "round=1;repair=0", answers.oracle(["3 2 1", "7"]))
    programs = [sort_numbers.DISTINCT_DESC] * passes_per_model + [WRONG_DESC] * (
        4 - passes_per_model
    )
    for model in pack.SOLVER_MODELS:
        for index, program in enumerate(programs):
            put(table, s, "solver", f"round=1;model={model};attempt={index}", answers.code(program))
    put(table, s, "judge", "round=1", answers.judge())


SETTINGS = {**pack.DEMO_SETTINGS, "max_iters_per_seed": 1}


def test_a_family_that_succeeded_elsewhere_needs_a_larger_gain(fake_server):
    table = pack.responses()
    sort_seed_evolves_with_family(table, "dynamic programming over prefixes", passes_per_model=3)
    fake_server.responder = KeyedResponder(table)
    seed_set, evolver, panel = build_world(
        fake_server, seeds=("demo/array-sum", "demo/sort-numbers")
    )
    campaign = running(
        campaign_create(
            name="reuse", seed_set=seed_set, evolver=evolver, panel=panel, settings=SETTINGS
        )
    )
    first = advance_until_done(campaign.lineages.get(seed__origin_id="demo/array-sum"))
    assert (
        first.candidates.get(round=1).decision == "accepted"
    )  # family "dynamic programming over prefixes"
    second = advance_until_done(campaign.lineages.get(seed__origin_id="demo/sort-numbers"))
    cand = second.candidates.get(round=1)
    # 6/8 pass -> level 2: gain 1 over the seed would do, but the family is already used elsewhere.
    assert (cand.passes, cand.level) == (6, 2)
    assert cand.decision == "not_harder"
    assert "required gain 2" in cand.decision_reason and "another lineage" in cand.decision_reason


def test_the_same_gain_is_enough_for_a_family_not_used_elsewhere(fake_server):
    table = pack.responses()
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=3)
    fake_server.responder = KeyedResponder(table)
    seed_set, evolver, panel = build_world(
        fake_server, seeds=("demo/array-sum", "demo/sort-numbers")
    )
    campaign = running(
        campaign_create(
            name="fresh", seed_set=seed_set, evolver=evolver, panel=panel, settings=SETTINGS
        )
    )
    advance_until_done(campaign.lineages.get(seed__origin_id="demo/array-sum"))
    second = advance_until_done(campaign.lineages.get(seed__origin_id="demo/sort-numbers"))
    cand = second.candidates.get(round=1)
    assert (cand.level, cand.decision) == (2, "accepted")


def test_max_iters_per_seed_stops_a_lineage(fake_server):
    table = pack.responses()
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=4)  # 8/8: not harder
    fake_server.responder = KeyedResponder(table)
    seed_set, evolver, panel = build_world(fake_server, seeds=("demo/sort-numbers",))
    settings = {**SETTINGS, "no_improve_patience": 5}
    campaign = running(
        campaign_create(
            name="iters", seed_set=seed_set, evolver=evolver, panel=panel, settings=settings
        )
    )
    lineage = advance_until_done(campaign.lineages.get())
    assert lineage.candidates.count() == 1
    assert lineage.stop_reason == "max_iters_per_seed reached (1)"


def test_a_reference_that_crashes_on_a_generated_test_makes_the_candidate_invalid(fake_server):
    table = pack.responses()
    s = "demo/sort-numbers"
    crashing = sort_numbers.DISTINCT_DESC + "\nif n > 1000:\n    raise SystemExit(3)\n"
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=4)
    put(
        table,
        s,
        "mutator",
        "round=1",
        answers.mutation("Deduplicate.", "Keeps duplicates.", "deduplication", crashing),
    )
    fake_server.responder = KeyedResponder(table)
    seed_set, evolver, panel = build_world(fake_server, seeds=("demo/sort-numbers",))
    campaign = running(
        campaign_create(
            name="crash", seed_set=seed_set, evolver=evolver, panel=panel, settings=SETTINGS
        )
    )
    lineage = advance_until_done(campaign.lineages.get())
    cand = lineage.candidates.get(round=1)
    assert cand.decision == "invalid"
    assert cand.decision_reason.startswith("reference solution RE on large test")


def test_a_failing_test_generator_is_regenerated_with_its_error(fake_server):
    table = pack.responses()
    s = "demo/sort-numbers"
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=4)
    put(
        table,
        s,
        "test_generator",
        "round=1;try=0",
        answers.code("import sys\nsys.exit('no generator today')\n"),
    )
    put(table, s, "test_generator", "round=1;try=1", answers.code(array_sum.ARRAY_GENERATOR))
    responder = KeyedResponder(table)
    fake_server.responder = responder
    seed_set, evolver, panel = build_world(fake_server, seeds=("demo/sort-numbers",))
    campaign = running(
        campaign_create(
            name="regen", seed_set=seed_set, evolver=evolver, panel=panel, settings=SETTINGS
        )
    )
    lineage = advance_until_done(campaign.lineages.get())
    cand = lineage.candidates.get(round=1)
    assert cand.test_repairs == 1
    assert cand.validation_ledger[0]["outcome"] == "generator failed; regenerating"
    assert cand.decision == "not_harder"  # validated and measured after the regeneration


def test_a_model_endpoint_failure_is_recorded_and_the_candidate_errors(fake_server):
    """A refusal about the request's content (here the prompt is too long for the model) is
    the candidate's failure; a refusal of the endpoint's configuration (401, 403, 404, a 400 on
    a parameter) pauses the campaign instead (test_evolver_config_errors.py)."""
    table = pack.responses()
    table[("writer", "seed=demo/sort-numbers;round=1;role=writer")] = Fault.http_status(
        400, CONTEXT_TOO_LONG
    )
    fake_server.responder = KeyedResponder(table)
    seed_set, evolver, panel = build_world(fake_server, seeds=("demo/sort-numbers",))
    campaign = running(
        campaign_create(
            name="404", seed_set=seed_set, evolver=evolver, panel=panel, settings=SETTINGS
        )
    )
    lineage = advance_until_done(campaign.lineages.get())
    cand = lineage.candidates.get(round=1)
    assert cand.decision == "error"
    assert cand.decision_reason.startswith("model call failed")
    assert campaign.llm_calls.filter(role="writer", status="error").count() == 1


def test_hitting_the_call_budget_pauses_the_campaign_with_the_reason(fake_server):
    fake_server.responder = KeyedResponder(pack.responses())
    seed_set, evolver, panel = build_world(fake_server, seeds=("demo/sort-numbers",))
    campaign = running(
        campaign_create(
            name="budget",
            seed_set=seed_set,
            evolver=evolver,
            panel=panel,
            settings=SETTINGS,
            budget_max_calls=10,
        )
    )
    lineage = advance_until_done(campaign.lineages.get())
    campaign.refresh_from_db()
    assert campaign.state == "paused"
    assert campaign.state_reason.startswith("budget reached")
    assert campaign.calls_made == 10
    assert lineage.state in ("pending", "evolving")  # nothing lost: resumable where it stopped


def test_an_open_ended_seed_is_skipped_with_the_reason(fake_server):
    fake_server.responder = KeyedResponder(pack.responses())
    seed_set, evolver, panel = build_world(fake_server, seeds=("demo/sort-numbers",))
    seed_set.problems.update(
        comparison={"mode": "score", "verifier": "print(1)", "direction": "max"}
    )
    campaign = running(
        campaign_create(
            name="scored", seed_set=seed_set, evolver=evolver, panel=panel, settings=SETTINGS
        )
    )
    lineage = advance_until_done(campaign.lineages.get())
    assert lineage.state == "skipped" and "open-ended seed" in lineage.stop_reason
    assert not campaign.llm_calls.exists()
