"""The contamination screen end to end, through the curation gate and the release card: a real
BenchEvolver campaign (``tests/evolution/screening/recall_world.py``) accepts a recalled public
problem (Codeforces 1873A renamed and reworded) and a new one; the gate's similarity rule holds
the recalled one back naming its nearest public problem, the "newer than" rule follows the
public problem's date, and the frozen release's card says how its problems were screened."""

from __future__ import annotations

import pytest

from releases import exports, services
from releases.gate import GateRules, RulesError
from tests.evolution.benchevolver.helpers import fake_server  # noqa: F401 (fixture)
from tests.evolution.screening.recall_world import recall_world
from tests.factories import UserFactory
from tests.support.gate_rules import SELECTION_TIME_OK

from .builders import World, review

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _rule(entry: dict, name: str) -> dict:
    (rule,) = [r for r in entry["rules"] if r["rule"] == name]
    return rule


def _reviewed(world) -> None:
    reviews = World(campaign=world.campaign, seeds={}, evolved={})
    reviews.reviewers = [UserFactory(username="rev-a"), UserFactory(username="rev-b")]
    for problem in (world.recalled, world.novel):
        review(reviews, problem, (4, "valid"), (4, "valid"))


def test_the_gate_holds_back_a_recalled_problem_and_the_card_states_the_screen(fake_server):  # noqa: F811
    world = recall_world(fake_server)
    _reviewed(world)
    bench = services.benchmark_create(name="Screened-Plus", default_rules=SELECTION_TIME_OK)
    draft = services.release_create(benchmark=bench, campaigns=[world.campaign])

    # Without a maximum the report still names each evolved problem's nearest public problem.
    run = services.gate_run_create(release=draft)
    by_id = {e["public_id"]: e for e in run.report}
    recalled, novel = by_id[world.recalled.public_id], by_id[world.novel.public_id]
    screen = _rule(recalled, "public_similarity")
    assert screen["passed"] and screen["detail"].startswith(
        "nearest public problem: livecodebench 1873_A, 2023-08-21 (similarity 1.00"
    )
    assert screen["detail"].endswith("; no maximum set")
    assert recalled["passed"] and novel["passed"]
    nearest = recalled["facts"]["screen"]["nearest"][0]
    assert (nearest["public_id"], nearest["code"]) == (world.public.public_id, 1.0)
    assert recalled["facts"]["screen"]["index"]["corpora"]["livecodebench"]["problems"] == 1
    # Originals are public problems themselves.
    originals = [e for e in run.report if e["origin"] == "original"]
    assert originals and all(
        _rule(e, "public_similarity")["detail"].startswith("an original") for e in originals
    )

    # The documented maximum: the recalled problem is held back, the new one is not.
    services.release_update(release=draft, rules={**draft.gate_rules, "max_public_similarity": 0.3})
    run = services.gate_run_create(release=draft)
    by_id = {e["public_id"]: e for e in run.report}
    held = _rule(by_id[world.recalled.public_id], "public_similarity")
    assert not held["passed"] and not by_id[world.recalled.public_id]["passed"]
    assert "livecodebench 1873_A" in held["detail"] and held["detail"].endswith(
        "must stay below 0.3"
    )
    kept = _rule(by_id[world.novel.public_id], "public_similarity")
    assert kept["passed"] and by_id[world.novel.public_id]["passed"]

    # "Newer than": 1873A was published on 2023-08-21. Against public problems dated before
    # 2023-09-01 the recalled problem fails; before 2023-08-01, 1873A does not count.
    newer = {**SELECTION_TIME_OK, "max_similarity_before": 0.3}
    services.release_update(release=draft, rules={**newer, "similarity_before_date": "2023-09-01"})
    run = services.gate_run_create(release=draft)
    older = _rule(
        {e["public_id"]: e for e in run.report}[world.recalled.public_id],
        "public_similarity_before",
    )
    assert not older["passed"]
    assert older["detail"].startswith(
        "closest public problem dated before 2023-09-01 (or undated): livecodebench 1873_A"
    )
    services.release_update(release=draft, rules={**newer, "similarity_before_date": "2023-08-01"})
    run = services.gate_run_create(release=draft)
    entry = {e["public_id"]: e for e in run.report}[world.recalled.public_id]
    assert _rule(entry, "public_similarity_before")["passed"]
    assert "1873_A" not in _rule(entry, "public_similarity_before")["detail"]

    # Back to the maximum; freeze: the recalled problem stays out, the card states the screen.
    services.release_update(
        release=draft, rules={**SELECTION_TIME_OK, "max_public_similarity": 0.3}
    )
    services.gate_run_create(release=draft)
    frozen = services.release_freeze(release=draft)
    items = {i.public_id: i for i in frozen.items.all()}
    assert world.novel.public_id in items and world.recalled.public_id not in items
    assert items[world.novel.public_id].provenance["screen"]["max_similarity"] < 0.3
    card = exports.card_markdown(frozen)
    section = card.split("## Contamination screen\n\n", 1)[1].split("\n\n## ", 1)[0]
    day = frozen.gate_runs.order_by("-created_at").first().created_at.date().isoformat()
    assert section.startswith(f"Screened on {day} against 168 public problems (")
    assert "benchforge-demo 3, humaneval 164, livecodebench 1 (dated 2023-08-21 to 2023-08-21)" in (
        section
    )
    assert "datasketch MinHash (128 permutations)" in section
    assert "held back at similarity 0.3 or above to any public problem." in section
    assert "over its 1 screened problems" in section
    assert "Not caught: a problem recalled from a corpus that was not indexed" in section


def test_a_curator_who_includes_a_flagged_problem_is_named_on_the_card(fake_server):  # noqa: F811
    world = recall_world(fake_server)
    _reviewed(world)
    bench = services.benchmark_create(
        name="Screened-Override",
        default_rules={
            **SELECTION_TIME_OK,
            "max_similarity_before": 0.3,
            "similarity_before_date": "2024-01-01",
        },
    )
    draft = services.release_create(benchmark=bench, campaigns=[world.campaign])
    services.gate_run_create(release=draft)
    services.curation_decide(
        release=draft,
        problem=world.recalled,
        include=True,
        justification="kept on purpose: a known classic, labelled as such",
    )
    frozen = services.release_freeze(release=draft)
    assert frozen.items.filter(public_id=world.recalled.public_id).exists()
    card = exports.card_markdown(frozen)
    assert (
        "held back at 0.3 or above to a public problem dated before 2024-01-01 (undated ones "
        "counted as older)." in card
    )
    assert "1 problem above it was included by a curator's decision" in card
    assert "Highest similarity to a public problem over its 2 screened problems: 1.00." in card
    # Blind review withholds how many problems were evolved: the card does not count them.
    blind = exports.card_markdown(frozen, withhold_origin=True)
    assert "screened problems" not in blind and "Some problems above it" in blind


def test_the_screen_rules_are_validated_by_name():
    rules = GateRules.from_dict(
        {"max_similarity_before": 0.4, "similarity_before_date": "2024-02-29"}
    )
    assert rules.similarity_before_date == "2024-02-29"
    for data, field, message in (
        ({"max_public_similarity": 0.1}, "max_public_similarity", "between 0.2 and 1.0"),
        ({"max_similarity_before": 0.3}, "similarity_before_date", "needed too"),
        ({"similarity_before_date": "2024-01-01"}, "max_similarity_before", "needed too"),
        (
            {"max_similarity_before": 0.3, "similarity_before_date": "2024-13-01"},
            "similarity_before_date",
            "YYYY-MM-DD",
        ),
        (
            {"max_similarity_before": 0.3, "similarity_before_date": 20240101},
            "similarity_before_date",
            "YYYY-MM-DD",
        ),
    ):
        with pytest.raises(RulesError) as caught:
            GateRules.from_dict(data)
        assert caught.value.field == field and message in str(caught.value)
