"""The shared measurement stage in X-Coder campaigns: every accepted problem is measured by the
campaign's panel (J models x K attempts, BenchEvolver's solver prompt, verdicts, infrastructure
rules and level map), the gate reads the result, and a setting turns it off."""

from __future__ import annotations

import hashlib

import pytest
from django.urls import reverse

from evolution.judging.difficulty import phi
from evolution.measurement.models import Measurement, MeasurementState
from evolution.models import Campaign, Problem
from evolution.models.campaigns import CampaignState
from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline
from releases import services as release_services
from tests.support.fake_openai import Fault
from tests.support.gate_rules import SELECTION_TIME_OK
from tests.xcoder.helpers import (
    CORRECT,
    SCRIPTED_SETTINGS,
    WRONG_LARGE,
    Responder,
    base_table,
    endpoint,
    seed_set,
)
from xcoder import services as xcoder

from .helpers import PanelAnswers, make_panel

pytestmark = pytest.mark.django_db(transaction=True)

LANTERN = "Lantern Festival Budget"


def xcoder_campaign(server, *, panel=None, **settings) -> Campaign:
    campaign = xcoder.xcoder_campaign_create(
        name="xcoder measured",
        seed_set=seed_set(),
        generator_endpoint=endpoint(server, "generator"),
        solver_endpoints=[endpoint(server, "solver-a"), endpoint(server, "solver-b")],
        settings={
            "num_tasks": 1,
            "style_mix": {"codeforces": 100},
            **SCRIPTED_SETTINGS,
            **settings,
        },
        panel=panel,
    )
    campaign_services.campaign_launch(campaign_id=campaign.pk)
    return campaign


def run(campaign: Campaign) -> Campaign:
    return run_inline(campaign_id=campaign.pk, max_steps=80)


def test_an_xcoder_campaign_measures_its_accepted_problem_with_its_panel(fake_server, personas):
    answers = PanelAnswers(
        {LANTERN: {"strong": CORRECT, "weak": WRONG_LARGE}}, fallback=Responder(base_table())
    )
    fake_server.responder = answers
    panel = make_panel(fake_server, ["strong", "weak"])
    campaign = run(xcoder_campaign(fake_server, panel=panel, measure_k=2))

    assert campaign.state == CampaignState.COMPLETED
    problem = Problem.objects.get(method="xcoder")
    m = Measurement.objects.get(campaign=campaign, problem=problem)
    assert m.state == MeasurementState.COMPLETED
    assert (m.passes, m.attempts, m.infra_errors) == (2, 4, 0)
    assert m.level == phi(0.5)
    assert m.per_model["strong"]["verdicts"] == {"AC": 2}
    assert m.per_model["weak"]["verdicts"] == {"WA": 2}
    # K attempts per model, asked from the statement with BenchEvolver's solver prompt and
    # replay keys that name the statement, not a database id.
    digest = hashlib.sha256(problem.statement.encode()).hexdigest()[:16]
    assert sorted(answers.asked) == [
        (model, f"measure;statement={digest};model={model};attempt={i}")
        for model in ("strong", "weak")
        for i in (0, 1)
    ]

    # The gate reads the measurement: the difficulty rule passes on the measured pass@1.
    benchmark = release_services.benchmark_create(
        default_rules=SELECTION_TIME_OK, name="Measured X-Coder"
    )
    release = release_services.release_create(benchmark=benchmark, campaigns=[campaign])
    run_ = release_services.gate_run_create(release=release, by=personas.curator.user)
    [entry] = [e for e in run_.report if e["problem_id"] == problem.pk]
    [rule] = [r for r in entry["rules"] if r["rule"] == "difficulty"]
    assert rule["passed"], rule
    assert "pass@1 0.500 (2/4)" in rule["detail"]
    assert entry["facts"]["panel_attempts"] == 4

    # The campaign page and the problem page show it.
    page = personas.curator.client.get(reverse("xcoder:campaign_detail", args=[campaign.pk]))
    body = page.content.decode()
    assert "1 of 1 kept problem(s) measured" in body
    assert "0.500 (2/4)" in body
    page = personas.curator.client.get(
        reverse("evolution:problem_detail", args=[problem.public_id])
    )
    assert "Measured pass@1 <strong>0.500</strong> (2/4)" in page.content.decode()


def test_the_setting_turns_the_measurement_off(fake_server, personas):
    answers = PanelAnswers({LANTERN: {"strong": CORRECT}}, fallback=Responder(base_table()))
    fake_server.responder = answers
    panel = make_panel(fake_server, ["strong"])
    campaign = run(xcoder_campaign(fake_server, panel=panel, measure_kept=False))

    assert campaign.state == CampaignState.COMPLETED
    assert Problem.objects.filter(method="xcoder").count() == 1
    assert not Measurement.objects.exists()
    assert answers.asked == []
    page = personas.curator.client.get(reverse("xcoder:campaign_detail", args=[campaign.pk]))
    assert "measurement of kept problems is turned off" in page.content.decode()


def test_without_a_panel_nothing_is_measured_and_the_page_says_why(fake_server, personas):
    fake_server.responder = PanelAnswers({}, fallback=Responder(base_table()))
    campaign = run(xcoder_campaign(fake_server))

    assert campaign.state == CampaignState.COMPLETED
    assert not Measurement.objects.exists()
    page = personas.curator.client.get(reverse("xcoder:campaign_detail", args=[campaign.pk]))
    assert "the campaign has no panel" in page.content.decode()


def test_a_failing_panel_endpoint_pauses_the_campaign_and_is_never_counted(fake_server):
    answers = PanelAnswers(
        {LANTERN: {"strong": CORRECT, "down": Fault.server_error(503)}},
        fallback=Responder(base_table()),
    )
    fake_server.responder = answers
    panel = make_panel(fake_server, ["strong", "down"])
    campaign = run(xcoder_campaign(fake_server, panel=panel, measure_k=2))

    # Three failed calls for one attempt (infra_retry_limit): paused, naming the endpoint.
    assert campaign.state == CampaignState.PAUSED
    assert "'down'" in campaign.state_reason and "HTTP 503" in campaign.state_reason
    m = Measurement.objects.get(campaign=campaign)
    assert m.state == MeasurementState.PENDING
    assert set(m.runs.filter(endpoint__name="down").values_list("verdict", flat=True)) == {"IE"}

    # The endpoint comes back: resuming asks the failed attempts again; the outage is not
    # difficulty, so the pass rate counts only answered attempts.
    answers.table[LANTERN]["down"] = WRONG_LARGE
    campaign_services.campaign_resume(campaign_id=campaign.pk)
    campaign = run(campaign)
    assert campaign.state == CampaignState.COMPLETED
    m.refresh_from_db()
    assert m.state == MeasurementState.COMPLETED
    assert (m.passes, m.attempts) == (2, 4)
    down = m.runs.filter(endpoint__name="down").first()
    assert down.verdict == "WA" and down.details["infra_errors"]
