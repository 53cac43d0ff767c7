"""A realistic panel on the loopback server: one endpoint that answers 400 to any temperature but
1, one failing intermittently with 5xx and time-outs, one answering correctly, one wrongly.
Infrastructure failures are retried, recorded with their status, never counted as difficulty;
an endpoint that keeps failing pauses the campaign naming it."""

from __future__ import annotations

import pytest

from evolution.benchevolver.demo import answers, pack
from evolution.benchevolver.models import SolverAttempt
from evolution.benchevolver.services import campaign_create, lineage_advance
from evolution.importers import import_seeds
from evolution.models import LLMCall, ProblemSet
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_resume
from tests.support.fake_openai import Fault, by_model, intermittent, only_default_temperature

from . import lcb_world as w
from .test_scenarios import running

pytestmark = pytest.mark.django_db(transaction=True)


def _right(body, headers):
    return answers.code(w.SHORT_SORT_OK)


def _wrong(body, headers):
    return answers.code(w.SHORT_SORT_WRONG)


def _panel_server(fake_server):
    fake_server.responder = by_model(
        {
            "strict": only_default_temperature(_right),
            # Every attempt's first request gets a 503, its second waits past the time-out.
            "flaky": intermittent(_right, [Fault.server_error(503), Fault.timeout(6.0)]),
            "right": _right,
            "wrong": _wrong,
        }
    )


def _campaign(fake_server, *, strict_omits_temperature: bool, settings=None):
    import_seeds(
        source="lcb",
        content=w.short_sort_line(),
        set_name="lcb-one",
        solutions_content=w.solutions_text().splitlines()[0],
    )
    strict = w.endpoint(fake_server, "strict", omit_temperature=strict_omits_temperature)
    # 3 s: long enough for a real answer on a loaded machine, short next to the 6 s stall.
    flaky = w.endpoint(fake_server, "flaky", timeout_s=3.0)
    panel = w.panel_of(
        "realistic",
        [strict, flaky, w.endpoint(fake_server, "right"), w.endpoint(fake_server, "wrong")],
    )
    return running(
        campaign_create(
            name="realistic",
            seed_set=ProblemSet.objects.get(name="lcb-one"),
            evolver=w.endpoint(fake_server, "evolver"),
            panel=panel,
            settings={"allowed_seed_levels": [1, 2, 3, 4, 5], **(settings or {})},
        )
    )


def _calibrate(lineage, limit=12):
    for _ in range(limit):
        lineage.refresh_from_db()
        if lineage.state != "pending" or lineage.campaign.state != CampaignState.RUNNING:
            return lineage
        lineage_advance(lineage_id=lineage.pk)
        lineage.campaign.refresh_from_db()
    lineage.refresh_from_db()
    return lineage


def test_pass_rates_count_only_real_answers_and_failed_calls_are_retried(fake_server):
    _panel_server(fake_server)
    campaign = _campaign(fake_server, strict_omits_temperature=True)
    lineage = _calibrate(campaign.lineages.get())

    # 4 models x K=4, every attempt eventually answered: 12 right (strict, flaky, right), 4
    # wrong. The flaky endpoint's failed calls are not among the 16.
    assert lineage.state == "evolving"
    assert (lineage.seed_passes, lineage.seed_attempts) == (12, 16)
    flaky = SolverAttempt.objects.filter(lineage=lineage, endpoint__name="flaky")
    assert flaky.count() == 4
    assert all(a.verdict == "AC" for a in flaky)
    # Each flaky attempt keeps its infrastructure history: a 503, then no HTTP answer (time-out).
    for attempt in flaky:
        failure = attempt.details["infra_errors"][0]
        assert failure["status"] is None and "after 2 tries" in failure["message"]
        assert failure["call_id"]
    failed_calls = LLMCall.objects.filter(campaign=campaign, endpoint__name="flaky", status="error")
    assert failed_calls.count() >= 4 and all(c.tries == 2 for c in failed_calls)

    # The endpoint without temperature works: it was never sent one, and never refused.
    strict_bodies = [r.body for r in fake_server.requests if r.body["model"] == "strict"]
    assert strict_bodies and all("temperature" not in b for b in strict_bodies)
    assert not LLMCall.objects.filter(endpoint__name="strict", status="error").exists()
    # The others got the campaign's temperature (Table 5: 0.8), since they set none.
    right = [r.body for r in fake_server.requests if r.body["model"] == "right"]
    assert {b["temperature"] for b in right} == {0.8}


def test_an_endpoint_that_keeps_failing_pauses_the_campaign_naming_it(fake_server):
    _panel_server(fake_server)
    campaign = _campaign(fake_server, strict_omits_temperature=False)
    lineage = _calibrate(campaign.lineages.get())
    campaign.refresh_from_db()

    assert campaign.state == "paused"
    assert campaign.state_reason.startswith("panel endpoint 'strict' keeps failing")
    assert "HTTP 400" in campaign.state_reason and "temperature" in campaign.state_reason
    # Nothing was measured from the outage: the seed is still pending, no pass rate recorded.
    assert lineage.state == "pending" and lineage.seed_attempts is None
    strict = SolverAttempt.objects.filter(lineage=lineage, endpoint__name="strict")
    assert strict.count() == 4 and {a.verdict for a in strict} == {"IE"}
    assert {e["status"] for a in strict for e in a.details["infra_errors"]} == {400}
    # A 400 is not retried by the client: three steps, one request per attempt each.
    assert LLMCall.objects.filter(endpoint__name="strict", status="error").count() == 12

    # The admin fixes the endpoint (send no temperature) and resumes: calibration completes.
    strict_endpoint = strict.first().endpoint
    strict_endpoint.omit_temperature = True
    strict_endpoint.save()
    campaign_resume(campaign_id=campaign.pk)
    type(campaign).objects.filter(pk=campaign.pk).update(state=CampaignState.RUNNING)
    lineage = _calibrate(lineage)
    assert lineage.state == "evolving"
    assert (lineage.seed_passes, lineage.seed_attempts) == (12, 16)
    assert {a.verdict for a in strict.all()} == {"AC"}


def test_a_panel_member_sets_its_own_k(fake_server):
    _panel_server(fake_server)
    campaign = _campaign(fake_server, strict_omits_temperature=True)
    campaign.panel.members.filter(endpoint__name="wrong").update(attempts=1)
    campaign.panel.members.filter(endpoint__name="right").update(attempts=6)
    lineage = _calibrate(campaign.lineages.get())
    counts = {
        name: SolverAttempt.objects.filter(lineage=lineage, endpoint__name=name).count()
        for name in ("strict", "flaky", "right", "wrong")
    }
    assert counts == {"strict": 4, "flaky": 4, "right": 6, "wrong": 1}
    assert (lineage.seed_passes, lineage.seed_attempts) == (14, 15)


def test_failed_faithfulness_calls_are_retried_not_read_as_an_underspecified_statement(
    fake_server,
):
    from .helpers import KeyedResponder, build_world
    from .test_scenarios import SETTINGS, advance_until_done

    table = pack.responses()
    for index in range(3):  # HumanEval/0 round 1: every faithfulness call fails (404)
        del table[
            ("faithfulness", f"seed=HumanEval/0;round=1;repair=0;attempt={index};role=faithfulness")
        ]
    fake_server.responder = KeyedResponder(table)
    seed_set, evolver, panel = build_world(fake_server, seeds=("HumanEval/0",))
    campaign = running(
        campaign_create(
            name="faithful", seed_set=seed_set, evolver=evolver, panel=panel, settings=SETTINGS
        )
    )
    lineage = advance_until_done(campaign.lineages.get())
    cand = lineage.candidates.get(round=1)
    assert cand.decision == "error"
    assert "faithfulness solver calls failed 3 times (infrastructure" in cand.decision_reason
    assert cand.spec_repairs == 0  # never sent to statement repair
    assert LLMCall.objects.filter(campaign=campaign, role="faithfulness").count() == 9
    assert not LLMCall.objects.filter(campaign=campaign, role="repair").exists()
