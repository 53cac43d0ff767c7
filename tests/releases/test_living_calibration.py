"""Human against model difficulty: Spearman's rho and its interval (checked against scipy),
the most-disagreeing problems routed to adjudication with the reason, and the optional gate
rule holding back model-only hardness."""

from __future__ import annotations

import math
import random

import pytest
from scipy.stats import norm, spearmanr

from evolution.benchevolver.models import Candidate
from releases import calibration, services
from review.models import Adjudication, Review
from tests.support.gate_rules import SELECTION_TIME_OK

from .builders import crafted_world

# (expert difficulty of reviewer one, of reviewer two, Codeforces estimate) per problem; the
# panel's pass@1 comes from the crafted campaign (E-UNSOLVED 0/8, E-EASY 7/8, E-OVERRIDE 4/8,
# the rest 3/8).
AUTHORED = {
    "E-OK": (3, 3, 1500),
    "E-LOWQ": (3, 4, 1600),
    "E-INVALID": (4, 4, 1900),
    "E-UNSOLVED": (1, 1, 900),
    "E-EASY": (2, 2, 1100),
    "E-DUP": (4, 5, 2100),
    "E-RESKIN": (2, 3, 1300),
    "E-OVERRIDE": (5, 5, 2600),
}


def author_of(world) -> None:
    for key, (first, second, cf) in AUTHORED.items():
        reviews = Review.objects.filter(item__problem=world.problem(key)).order_by("assignment_id")
        for review, difficulty in zip(reviews, (first, second), strict=True):
            Review.objects.filter(pk=review.pk).update(difficulty=difficulty, cf_rating=cf)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_spearman_and_its_interval_match_scipy_with_ties(seed):
    rng = random.Random(seed)
    x = [rng.choice([1, 2, 2.5, 3, 4, 5]) for _ in range(25)]
    y = [rng.choice([0.0, 0.125, 0.5, 0.75, 1.0]) + 0.1 * a for a in x]
    got = calibration.spearman(x, y)
    expected = spearmanr(x, y).statistic
    assert got.rho == pytest.approx(expected, abs=1e-12)
    half = norm.ppf(0.975) * math.sqrt(1.06 / (len(x) - 3))
    assert got.low == pytest.approx(math.tanh(math.atanh(expected) - half), abs=1e-9)
    assert got.high == pytest.approx(math.tanh(math.atanh(expected) + half), abs=1e-9)


def test_a_constant_side_has_no_correlation():
    assert calibration.spearman([3, 3, 3, 3], [0.1, 0.2, 0.3, 0.4]).rho is None


def test_campaign_calibration_from_authored_reviews_queues_the_disagreements(db):
    world = crafted_world()
    author_of(world)
    cal = calibration.for_campaign(campaign=world.campaign)
    rows = {r.public_id: r for r in cal.rows}
    assert len(rows) == 8 and cal.unrated == 1  # E-UNREVIEWED has no expert rating
    ids = {k: world.problem(k).public_id for k in AUTHORED}
    experts = [sum(AUTHORED[k][:2]) / 2 for k in AUTHORED]
    hardness = []
    for k in AUTHORED:
        cand = Candidate.objects.get(accepted_problem=world.problem(k))
        hardness.append(1 - cand.passes / cand.attempts)
    assert cal.correlation.n == 8
    assert cal.correlation.rho == pytest.approx(spearmanr(experts, hardness).statistic)
    assert cal.correlation.low < cal.correlation.rho < cal.correlation.high
    assert rows[ids["E-UNSOLVED"]].cf_rating == 900

    flagged = [r.public_id for r in cal.disagreements]
    # Experts' easiest is the panel's hardest (gap 7/8); experts' hardest is the panel's
    # second easiest (6/8); nothing else is half the release apart.
    assert flagged == [ids["E-UNSOLVED"], ids["E-OVERRIDE"]]
    assert rows[ids["E-UNSOLVED"]].model_only
    assert not rows[ids["E-OVERRIDE"]].model_only

    opened = calibration.disagreements_route(calibration=cal)
    assert len(opened) == 2
    queued = {
        a.item.problem.public_id: a for a in Adjudication.objects.filter(dimension="calibration")
    }
    assert set(queued) == set(flagged)
    assert queued[ids["E-UNSOLVED"]].detail == (
        "experts rate difficulty 1.0/5 (Codeforces ~900), panel pass@1 0.00: the panel finds it "
        "much harder; model-only hardness"
    )
    assert "the experts find it much harder" in queued[ids["E-OVERRIDE"]].detail
    assert queued[ids["E-UNSOLVED"]].status == "open"
    assert calibration.disagreements_route(calibration=cal) == []  # queued once


def test_release_calibration_uses_the_measurement_the_gate_used(frozen):
    world, release = frozen
    author_of(world)
    cal = calibration.for_release(release=release)
    rows = {r.public_id: r for r in cal.rows}
    assert set(rows) == {world.problem("E-OK").public_id, world.problem("E-OVERRIDE").public_id}
    assert rows[world.problem("E-OK").public_id].pass_at_1 == pytest.approx(3 / 8)
    assert rows[world.problem("E-OVERRIDE").public_id].level == 3
    assert cal.unrated == 1  # the seed S2 was never reviewed
    labels = sorted(p["label"].split(": ", 1)[1] for p in cal.plot()["points"])
    assert labels == ["experts 3.0/5, pass@1 0.38", "experts 5.0/5, pass@1 0.50"]


def test_the_gate_can_hold_back_model_only_hardness(db):
    world = crafted_world()
    author_of(world)
    Review.objects.filter(item__problem=world.problem("E-OK")).update(difficulty=1)
    Candidate.objects.filter(accepted_problem=world.problem("E-OK")).update(passes=1)
    bench = services.benchmark_create(
        default_rules=SELECTION_TIME_OK, name="Calibrated", description="d"
    )
    default = services.release_create(benchmark=bench, campaigns=[world.campaign])
    strict = services.release_create(
        benchmark=bench,
        version="1.1.0",
        campaigns=[world.campaign],
        rules={"exclude_model_only_hardness": True},
    )
    pid = world.problem("E-OK").public_id
    loose = {r["public_id"]: r for r in services.gate_run_create(release=default).report}
    held = {r["public_id"]: r for r in services.gate_run_create(release=strict).report}
    assert loose[pid]["passed"] is True
    assert held[pid]["passed"] is False
    rule = next(r for r in held[pid]["rules"] if r["rule"] == "model_only_hardness")
    assert rule["detail"] == (
        "experts rate difficulty 1.0/5 but pass@1 is 0.12: hardness may be artificial, "
        "for curator review"
    )


def test_a_calibration_disagreement_resolved_with_a_value_changes_the_plot(db):
    """(issue: the queue asked for a 1-5 value, then refused it: "Unknown dimension
    'calibration'".) The value is the settled expert difficulty: an override of difficulty."""
    from review.services import adjudication_resolve
    from tests.factories import UserFactory

    world = crafted_world()
    author_of(world)
    cal = calibration.for_campaign(campaign=world.campaign)
    calibration.disagreements_route(calibration=cal)
    unsolved = world.problem("E-UNSOLVED").public_id
    adjudication = Adjudication.objects.get(
        dimension="calibration", item__problem__public_id=unsolved
    )
    adjudication_resolve(
        adjudication=adjudication,
        by=UserFactory(),
        resolution="The experts misread the constraint; it is hard.",
        value="5",
    )
    adjudication.refresh_from_db()
    assert (adjudication.status, adjudication.resolved_value) == ("resolved", "5")
    after = {r.public_id: r for r in calibration.for_campaign(campaign=world.campaign).rows}
    assert after[unsolved].expert_difficulty == 5.0
    assert not after[unsolved].model_only
