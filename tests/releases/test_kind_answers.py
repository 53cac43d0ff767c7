"""Releases ask each kind what its campaigns made and what its panel measured
(``Kind.accepted_problems``, ``seed_problems``, ``panel_facts``) and never read a kind's
tables: the answers BenchEvolver gives, typed, and the gate pool built from them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from evolution.sources import PanelFacts
from evolution.streams.kinds import kind_for, registered
from releases import services
from tests import factories

pytestmark = pytest.mark.django_db


def test_every_kind_that_makes_problems_says_which_and_only_benchevolver_re_evolves():
    answers = {k.name: k.accepted_problems is not None for k in registered()}
    assert answers == {
        "benchevolver": True,
        "xcoder": True,
        "evosyn": True,
        "frontiersmith": True,
        "reasoning": False,
    }
    assert [k.name for k in registered() if k.reevolver] == ["benchevolver"]


def _accepted(lineage, *, passes, attempts, level, decided_at=None, endpoint=None):
    problem = factories.EvolvedProblemFactory(parent=lineage.seed)
    cand = factories.CandidateFactory(
        lineage=lineage,
        decision="accepted",
        accepted_problem=problem,
        passes=passes,
        attempts=attempts,
        level=level,
        decided_at=decided_at,
        panel_results={"m": {"passes": passes, "attempts": attempts}},
    )
    if endpoint is not None:
        factories.SolverAttemptFactory(lineage=lineage, candidate=cand, endpoint=endpoint)
    return problem, cand


def test_benchevolver_answers_with_its_candidates_then_its_seed_calibrations():
    kind = kind_for("benchevolver")
    mine, elsewhere = factories.CampaignFactory(), factories.CampaignFactory()
    lineage = factories.LineageFactory(campaign=mine, seed_passes=3, seed_attempts=4, seed_level=2)
    seed_model = factories.ModelEndpointFactory()
    factories.SolverAttemptFactory(lineage=lineage, endpoint=seed_model, verdict="WA")
    answered = factories.ModelEndpointFactory()
    when = datetime(2026, 3, 1, tzinfo=UTC)
    problem, cand = _accepted(
        lineage, passes=1, attempts=8, level=4, decided_at=when, endpoint=answered
    )
    # Another campaign accepted a problem too: asked with no campaign of its own, it answers.
    other, _ = _accepted(
        factories.LineageFactory(campaign=elsewhere), passes=2, attempts=4, level=3
    )

    assert set(kind.accepted_problems([mine.pk])) == {problem}
    assert set(kind.seed_problems([mine.pk])) == {lineage.seed}
    facts = kind.panel_facts([problem.pk, other.pk, lineage.seed_id], [mine.pk])

    assert facts[problem.pk] == PanelFacts(
        passes=1,
        attempts=8,
        endpoints=frozenset({answered.pk}),
        provenance={
            "campaign": {"id": mine.pk, "name": mine.name},
            "candidate": {
                "id": cand.pk,
                "round": cand.round,
                "level": 4,
                "family": "doubling",
                "idea": "",
                "decision_reason": "",
            },
            "validation_ledger": [],
            "panel_results": {"m": {"passes": 1, "attempts": 8}},
        },
        level=4,
        measured_at=when,
        source="candidate",
    )
    assert (facts[other.pk].passes, facts[other.pk].attempts, facts[other.pk].level) == (2, 4, 3)
    seed = facts[lineage.seed_id]
    assert (seed.passes, seed.attempts, seed.level) == (3, 4, 2)
    assert seed.endpoints == frozenset({seed_model.pk})
    assert seed.provenance["seed_calibration"] == {"level": 2}
    assert seed.source == "calibration"
    assert seed.provenance["panel_results"] == {
        seed_model.name: {"passes": 0, "attempts": 1, "verdicts": {"WA": 1}}
    }


def test_the_gate_pool_is_what_the_kinds_answer_with_their_typed_facts():
    campaign = factories.CampaignFactory(kind="benchevolver")
    lineage = factories.LineageFactory(campaign=campaign, seed_passes=4, seed_attempts=4)
    problem, _ = _accepted(lineage, passes=1, attempts=4, level=4)
    # An X-Coder campaign's accepted task records its campaign; its seed does not count.
    xcoder = factories.CampaignFactory(kind="xcoder")
    task = factories.EvolvedProblemFactory(
        kind="synthesized", method="xcoder", metadata={"campaign": xcoder.pk}
    )
    factories.ProblemFactory(kind="seed", metadata={"campaign": xcoder.pk})
    release = services.release_create(
        benchmark=services.benchmark_create(name="Kinds"),
        campaigns=[campaign, xcoder],
    )

    problems, panel, _ = services._candidate_pool(release)

    assert [p.pk for p in problems] == sorted([problem.pk, task.pk]) + [lineage.seed_id]
    assert all(isinstance(f, PanelFacts) for f in panel.values())
    assert (panel[problem.pk].passes, panel[problem.pk].attempts) == (1, 4)
    assert (panel[lineage.seed_id].passes, panel[lineage.seed_id].attempts) == (4, 4)
    assert task.pk not in panel  # measured by no kind and by no shared measurement yet


def test_a_seeds_published_per_model_results_leave_infrastructure_errors_apart():
    """The release's per-model rows of a seed are pooled as its calibration pooled them
    (``evolution.judging.difficulty.pool``): an attempt that never reached the model is not a
    failed one. They were counted as attempts, so a row could say 1 of 2 where the seed's own
    figure said 1 of 1."""
    lineage = factories.LineageFactory(seed_passes=1, seed_attempts=1, seed_level=1)
    model = factories.ModelEndpointFactory()
    factories.SolverAttemptFactory(lineage=lineage, endpoint=model, verdict="AC")
    factories.SolverAttemptFactory(lineage=lineage, endpoint=model, verdict="IE")

    facts = kind_for("benchevolver").panel_facts([lineage.seed_id], [lineage.campaign_id])

    assert facts[lineage.seed_id].provenance["panel_results"] == {
        model.name: {"passes": 1, "attempts": 1, "verdicts": {"AC": 1}, "infra_errors": 1}
    }
