"""The curation gate on a crafted candidate set: every rule, its reason, curator overrides."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from releases import services
from releases.gate import GateRules, RulesError
from releases.models import ReleaseState
from tests.support.gate_rules import SELECTION_TIME_OK

from .builders import crafted_world


@pytest.fixture
def draft(db):
    world = crafted_world()
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="LiveCodeBench-Plus")
    release = services.release_create(benchmark=bench, campaigns=[world.campaign])
    return world, release


def _by_id(run) -> dict[str, dict]:
    return {e["public_id"]: e for e in run.report}


def _failed(entry) -> set[str]:
    return {r["rule"] for r in entry["rules"] if not r["passed"]}


def test_it_reports_every_candidate_with_each_rule_and_why(draft):
    world, release = draft
    run = services.gate_run_create(release=release)
    report = _by_id(run)
    p = world.problem
    assert run.candidates == 12 and len(report) == 12
    assert _failed(report[p("E-OK").public_id]) == set()
    assert _failed(report[p("E-LOWQ").public_id]) == {"quality"}
    assert _failed(report[p("E-INVALID").public_id]) == {"validity"}
    assert _failed(report[p("E-UNSOLVED").public_id]) == {"difficulty"}
    assert _failed(report[p("E-EASY").public_id]) == {"difficulty"}
    assert _failed(report[p("E-UNREVIEWED").public_id]) == {"reviews", "quality"}
    assert _failed(report[p("E-DUP").public_id]) == {"duplicate"}
    assert _failed(report[p("E-RESKIN").public_id]) == {"duplicate"}
    assert _failed(report[p("E-OVERRIDE").public_id]) == set()
    assert _failed(report[p("S1").public_id]) == {"difficulty"}
    assert _failed(report[p("S2").public_id]) == set()
    assert _failed(report[p("S3").public_id]) == {"difficulty"}
    assert run.passed == 3

    def detail(key, rule):
        return next(r["detail"] for r in report[p(key).public_id]["rules"] if r["rule"] == rule)

    assert "mean quality 2.5" in detail("E-LOWQ", "quality")
    assert "judged invalid" in detail("E-INVALID", "validity")
    assert "0.000 (0/8)" in detail("E-UNSOLVED", "difficulty")
    assert "[0.05, 0.75]" in detail("E-EASY", "difficulty")
    assert "0 submitted review(s)" in detail("E-UNREVIEWED", "reviews")
    assert p("E-OK").public_id in detail("E-DUP", "duplicate")
    assert "seed lcb-S1" in detail("E-RESKIN", "duplicate")
    assert "originals need at most 0.75" in detail("S1", "difficulty")
    assert "no panel measurement" in detail("S3", "difficulty")
    # The override (quality 2 -> 4) is what the gate read.
    assert report[p("E-OVERRIDE").public_id]["facts"]["mean_quality"] == 4.0
    assert report[p("E-OK").public_id]["origin"] == "evolved"
    assert report[p("S2").public_id]["origin"] == "original"


def test_it_applies_rules_edited_for_the_release(draft):
    world, release = draft
    services.release_update(
        release=release,
        rules={**release.gate_rules, "min_quality": 2.5, "include_originals": False},
    )
    report = _by_id(services.gate_run_create(release=release))
    assert _failed(report[world.problem("E-LOWQ").public_id]) == set()
    assert _failed(report[world.problem("S2").public_id]) == {"supplement"}


def test_it_rejects_malformed_rules_naming_the_key():
    with pytest.raises(RulesError) as exc:
        GateRules.from_dict({"min_qualty": 3})
    assert exc.value.field == "min_qualty"
    with pytest.raises(RulesError, match="max_pass_at_1"):
        GateRules.from_dict({"max_pass_at_1": 1.5})
    with pytest.raises(RulesError, match="must not exceed"):
        GateRules.from_dict({"min_pass_at_1": 0.8, "max_pass_at_1": 0.5})
    with pytest.raises(RulesError, match="true or false"):
        GateRules.from_dict({"reject_invalid": "yes"})
    assert GateRules.from_dict({}).to_dict()["min_quality"] == 3.0


def test_it_refuses_rules_edits_that_do_not_validate(draft):
    _, release = draft
    with pytest.raises(ValidationError, match="min_reviews"):
        services.release_update(release=release, rules={"min_reviews": -1})


def test_curator_can_go_against_the_gate_only_with_a_justification(draft):
    world, release = draft
    services.gate_run_create(release=release)
    with pytest.raises(ValidationError, match="why"):
        services.curation_decide(
            release=release, problem=world.problem("E-LOWQ"), include=True, justification="  "
        )
    services.curation_decide(
        release=release,
        problem=world.problem("E-LOWQ"),
        include=True,
        justification="quality 2 was a misreading; re-checked by hand",
    )
    services.curation_decide(
        release=release,
        problem=world.problem("S2"),
        include=False,
        justification="leaked on a public forum",
    )
    selection = {e["public_id"]: e for e in services.release_selection(release=release)}
    assert selection[world.problem("E-LOWQ").public_id]["included"] is True
    assert selection[world.problem("S2").public_id]["included"] is False

    frozen = services.release_freeze(release=release)
    items = {i.public_id: i for i in frozen.items.all()}
    assert set(items) == {world.problem(k).public_id for k in ("E-OK", "E-OVERRIDE", "E-LOWQ")}
    lowq = items[world.problem("E-LOWQ").public_id]
    assert lowq.gate_passed is False
    assert lowq.curator_note == "quality 2 was a misreading; re-checked by hand"
    assert lowq.provenance["gate"]["rules"]
    assert lowq.provenance["review"]["n_reviews"] == 2
    assert lowq.provenance["validation_ledger"] == [{"vote": "agree", "source": "triangulation"}]
    assert lowq.provenance["lineage"]["chain"][0] == world.problem("S1").public_id


def test_it_refuses_to_freeze_without_a_gate_run_or_with_stale_rules(draft):
    _, release = draft
    with pytest.raises(ValidationError, match="Run the gate"):
        services.release_freeze(release=release)
    services.gate_run_create(release=release)
    services.release_update(release=release, rules={**release.gate_rules, "min_quality": 4})
    with pytest.raises(ValidationError, match="rules changed"):
        services.release_freeze(release=release)
    release.refresh_from_db()
    assert release.state == ReleaseState.DRAFT


def test_it_refuses_versions_that_are_malformed_or_not_newer(draft):
    world, release = draft
    with pytest.raises(ValidationError, match="major.minor.patch"):
        services.release_create(benchmark=release.benchmark, version="1.0")
    with pytest.raises(ValidationError, match="already has"):
        services.release_create(benchmark=release.benchmark, version="1.0.0")
    services.gate_run_create(release=release)
    services.release_freeze(release=release)
    with pytest.raises(ValidationError, match="newer"):
        services.release_create(benchmark=release.benchmark, version="0.9.0")
