"""A problem's measured difficulty is one figure wherever it is shown: the problem pages and the
review round filters read what the kinds answer (``Kind.panel_facts``), the same answer the
curation gate reads, and only then the shared panel measurement, which measures with the same
defaults as BenchEvolver's panel."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evolution.benchevolver.engine.config import EvolutionSettings
from evolution.judging.difficulty import PANEL_DEFAULTS
from evolution.measurement import panel
from evolution.measurement.selectors import problem_difficulty
from evolution.streams.kinds import problem_panel_facts
from tests import factories

pytestmark = pytest.mark.django_db


def test_a_seed_two_campaigns_calibrated_shows_the_figure_the_gate_reads(personas):
    seed = factories.ProblemFactory(title="Calibrated twice")
    first, second = factories.CampaignFactory(), factories.CampaignFactory()
    factories.LineageFactory(
        campaign=first, seed=seed, seed_passes=2, seed_attempts=4, seed_level=3
    )
    factories.LineageFactory(
        campaign=second, seed=seed, seed_passes=0, seed_attempts=4, seed_level=3
    )
    gate = problem_panel_facts([seed.pk])[seed.pk]
    shown = problem_difficulty([seed.pk])[seed.pk]
    assert (gate.passes, gate.attempts) == (2, 8)
    assert (shown.passes, shown.attempts, shown.level) == (2, 8, 3)
    assert shown.source == "calibration"
    page = personas.curator.client.get(reverse("evolution:problem_list")).content.decode()
    assert '0.25 <span class="muted">(2/8, calibration)</span>' in page


def test_an_accepted_problem_shows_its_candidates_figure_and_the_rest_the_shared_one():
    lineage = factories.LineageFactory()
    evolved = factories.EvolvedProblemFactory(parent=lineage.seed)
    factories.CandidateFactory(
        lineage=lineage,
        decision="accepted",
        accepted_problem=evolved,
        passes=1,
        attempts=8,
        level=4,
    )
    plain = factories.ProblemFactory()
    shown = problem_difficulty([evolved.pk, plain.pk])
    assert (shown[evolved.pk].passes, shown[evolved.pk].attempts) == (1, 8)
    assert (shown[evolved.pk].level, shown[evolved.pk].source) == (4, "candidate")
    assert plain.pk not in shown  # nothing measured it


def test_the_shared_measurement_measures_with_benchevolvers_panel_defaults():
    settings = EvolutionSettings()
    assert panel.defaults() is PANEL_DEFAULTS
    for name in (
        "target_eval_k",
        "temperature",
        "timeout",
        "max_output_bytes",
        "infra_retry_limit",
    ):
        assert getattr(settings, name) == getattr(PANEL_DEFAULTS, name), name
    assert (
        tuple(settings.level_thresholds) == PANEL_DEFAULTS.level_thresholds == (0.9, 0.7, 0.4, 0.1)
    )
    assert (PANEL_DEFAULTS.target_eval_k, PANEL_DEFAULTS.temperature) == (4, 0.8)  # Table 5
