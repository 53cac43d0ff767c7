"""An evolver-role endpoint that stays down (5xx or time-outs after the client's retries) is an
outage, not the lineage's fault: the campaign pauses with a reason naming the endpoint, no
candidate is decided `error`, and resuming after the outage carries on."""

from __future__ import annotations

import pytest

from evolution.benchevolver.demo import answers as demo_answers
from evolution.benchevolver.models import Candidate
from evolution.benchevolver.services import campaign_create, lineage_advance
from evolution.importers import import_seeds
from evolution.models import LLMCall, ProblemSet
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_resume
from tests.support.fake_openai import Fault, by_model

from . import lcb_world as w
from .test_scenarios import running

pytestmark = pytest.mark.django_db(transaction=True)


def right_answer(body, headers):
    return demo_answers.code(w.SHORT_SORT_OK)


def advance_lineage(lineage, steps: int):
    for _ in range(steps):
        lineage.campaign.refresh_from_db()
        if lineage.campaign.state != CampaignState.RUNNING:
            break
        lineage_advance(lineage_id=lineage.pk)
    lineage.refresh_from_db()
    lineage.campaign.refresh_from_db()
    return lineage


@pytest.mark.parametrize(
    "fault", [Fault.server_error(503), Fault.timeout(4.0)], ids=["5xx", "time-out"]
)
def test_an_evolver_endpoint_that_stays_down_pauses_the_campaign_naming_it(fake_server, fault):
    state = {"evolver": lambda body, headers: fault}
    fake_server.responder = by_model(
        {"right": right_answer, "evolver": lambda body, headers: state["evolver"](body, headers)}
    )
    import_seeds(
        source="lcb",
        content=w.short_sort_line(),
        set_name="lcb-one",
        solutions_content=w.solutions_text().splitlines()[0],
    )
    campaign = running(
        campaign_create(
            name="outage",
            seed_set=ProblemSet.objects.get(name="lcb-one"),
            # 2 s: short next to the 4 s stall.
            evolver=w.endpoint(fake_server, "evolver", timeout_s=2.0),
            panel=w.panel_of("one", [w.endpoint(fake_server, "right")]),
            settings={"allowed_seed_levels": [1, 2, 3, 4, 5]},
        )
    )
    lineage = advance_lineage(campaign.lineages.get(), 12)

    campaign = lineage.campaign
    assert campaign.state == CampaignState.PAUSED, campaign.state_reason
    assert campaign.state_reason.startswith("infrastructure failure (propose failed 3 times)")
    assert "mutator endpoint 'evolver' unavailable" in campaign.state_reason
    # Not the lineage's fault: nothing decided, the lineage still evolving.
    assert lineage.state == "evolving"
    assert not Candidate.objects.filter(decision="error").exists()
    # Three steps, each call retried once by the client (max_retries 1).
    failed = LLMCall.objects.filter(endpoint__name="evolver", role="mutator", status="error")
    assert failed.count() == 3 and all(c.tries == 2 for c in failed)

    # The outage ends; the admin resumes and the mutator is asked again.
    state["evolver"] = lambda body, headers: "no structured answer"
    campaign_resume(campaign_id=campaign.pk)
    type(campaign).objects.filter(pk=campaign.pk).update(state=CampaignState.RUNNING)
    lineage = advance_lineage(lineage, 1)
    # It answered (prose, no JSON: ledgered unparsable, the candidate an error), so it is up.
    assert LLMCall.objects.filter(
        endpoint__name="evolver", role="mutator", status="unparsable"
    ).exists()
    # Its answer reached the engine again: the round has its candidate.
    assert Candidate.objects.filter(lineage=lineage).exists()
