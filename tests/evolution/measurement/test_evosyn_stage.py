"""The shared measurement stage in EvoSyn campaigns: kept problems are measured by the
campaign's panel after filtering, and the gate reads their pass@1."""

from __future__ import annotations

import pytest

from evolution.measurement.models import Measurement, MeasurementState
from evolution.models.campaigns import CampaignState
from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline
from evosyn import services as evosyn
from evosyn.models import InstanceStatus
from releases import services as release_services
from tests.evosyn.helpers import (
    CRASHING,
    FIGURE_3,
    IS_EMPTY_SOLUTIONS,
    SMALL_SETTINGS,
    SUM_EVENS_SOLUTIONS,
    KeyedResponder,
    script,
    world,  # noqa: F401 - the EvoSyn world fixture
)
from tests.support.answers import fenced
from tests.support.gate_rules import SELECTION_TIME_OK

from .helpers import PanelAnswers, make_panel

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_evosyn_campaign_measures_its_kept_problems(world, fake_server, personas):  # noqa: F811
    seed_set, endpoint = world
    fake_server.responder = PanelAnswers(
        {
            "sum_evens": {
                "strong": fenced(SUM_EVENS_SOLUTIONS[0]),
                "weak": fenced(SUM_EVENS_SOLUTIONS[2]),
            },
            "is_blank": {
                "strong": fenced(IS_EMPTY_SOLUTIONS[0]),
                "weak": fenced(IS_EMPTY_SOLUTIONS[0].replace("== ''", "!= ''")),
            },
        },
        fallback=KeyedResponder(script(strategist=[fenced(CRASHING), fenced(FIGURE_3)])),
    )
    panel = make_panel(fake_server, ["strong", "weak"])
    campaign = evosyn.evosyn_campaign_create(
        name="evosyn measured",
        seed_set=seed_set,
        endpoint=endpoint,
        settings={**SMALL_SETTINGS, "measure_k": 3},
        panel=panel,
        created_by=personas.admin.user,
    )
    campaign_services.campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=80)

    assert campaign.state == CampaignState.COMPLETED
    kept = [i.kept_problem for i in campaign.evosyn.instances.filter(status=InstanceStatus.KEPT)]
    assert kept
    for problem in kept:
        m = Measurement.objects.get(campaign=campaign, problem=problem)
        assert m.state == MeasurementState.COMPLETED
        # The strong model solves it every time; the weak one's answer is wrong.
        assert (m.passes, m.attempts) == (3, 6)
        assert m.per_model["weak"]["verdicts"] == {"WA": 3}

    benchmark = release_services.benchmark_create(
        default_rules=SELECTION_TIME_OK, name="Measured EvoSyn"
    )
    release = release_services.release_create(benchmark=benchmark, campaigns=[campaign])
    run = release_services.gate_run_create(release=release, by=personas.curator.user)
    for problem in kept:
        [entry] = [e for e in run.report if e["problem_id"] == problem.pk]
        [rule] = [r for r in entry["rules"] if r["rule"] == "difficulty"]
        assert rule["passed"] and "pass@1 0.500 (3/6)" in rule["detail"]
