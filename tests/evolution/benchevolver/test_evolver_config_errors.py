"""An evolver-role endpoint that refuses its own configuration (401, 403, 404, or a 400 on a
parameter such as a temperature a reasoning model does not support) pauses the campaign at the
first refusal, naming the endpoint and the status: asking again cannot help, and the candidate
is not at fault (nothing is decided `error`). A 400 about the prompt itself stays the item's."""

from __future__ import annotations

import pytest

from evolution.benchevolver.models import Candidate
from evolution.benchevolver.services import campaign_create
from evolution.importers import import_seeds
from evolution.llm.errors import LLMTransportError
from evolution.models import LLMCall, ProblemSet
from evolution.models.campaigns import CampaignState
from evolution.streams import errors
from tests.support.fake_openai import CONTEXT_TOO_LONG, UNSUPPORTED_TEMPERATURE, Fault, by_model

from . import lcb_world as w
from .test_evolver_outage import advance_lineage, right_answer
from .test_scenarios import running

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(
    ("fault", "status", "why"),
    [
        (Fault.http_status(401, '{"error": "bad key"}'), 401, "the API key or the account"),
        (Fault.http_status(403, '{"error": "forbidden"}'), 403, "the API key or the account"),
        (Fault.http_status(404, '{"error": "model not found"}'), 404, "the model or the URL"),
        (
            Fault.http_status(400, UNSUPPORTED_TEMPERATURE % 0.7),
            400,
            "the parameter 'temperature' is refused",
        ),
    ],
    ids=["401", "403", "404", "400-temperature"],
)
def test_an_evolver_endpoint_refusing_its_configuration_pauses_the_campaign(
    fake_server, fault, status, why
):
    fake_server.responder = by_model(
        {"right": right_answer, "evolver": lambda body, headers: fault}
    )
    import_seeds(
        source="lcb",
        content=w.short_sort_line(),
        set_name="lcb-one",
        solutions_content=w.solutions_text().splitlines()[0],
    )
    campaign = running(
        campaign_create(
            name="misconfigured",
            seed_set=ProblemSet.objects.get(name="lcb-one"),
            evolver=w.endpoint(fake_server, "evolver"),
            panel=w.panel_of("one", [w.endpoint(fake_server, "right")]),
            settings={"allowed_seed_levels": [1, 2, 3, 4, 5]},
        )
    )
    lineage = advance_lineage(campaign.lineages.get(), 12)

    campaign = lineage.campaign
    assert campaign.state == CampaignState.PAUSED, campaign.state_reason
    reason = campaign.state_reason
    assert reason.startswith("endpoint configuration (propose): mutator endpoint 'evolver'")
    assert f"refused the request with HTTP {status}" in reason
    assert why in reason
    # Paused at the first refusal: one call, not three steps' worth.
    refused = LLMCall.objects.filter(endpoint__name="evolver", status="error")
    assert refused.count() == 1 and refused.get().http_status == status
    # Not the lineage's fault: nothing decided, the lineage still evolving.
    assert lineage.state == "evolving"
    assert not Candidate.objects.filter(decision="error").exists()


def _refusal(status: int, body: str) -> LLMTransportError:
    from evolution.llm.remote import RemoteFailure

    return RemoteFailure(f"HTTP {status}: {body}", status=status, tries=1, body=body, latency_s=0)


def test_which_refusals_are_the_endpoints_configuration():
    def problem(status, body='{"error": "x"}'):
        return errors.configuration_problem(_refusal(status, body))

    assert problem(401) and problem(403) and problem(404)
    assert problem(400, UNSUPPORTED_TEMPERATURE % 0.2) == "the parameter 'temperature' is refused"
    # About the prompt, or no parameter named: the request's content, the item's business.
    assert problem(400, CONTEXT_TOO_LONG) == ""
    assert problem(400, '{"error": "bad request"}') == ""
    assert problem(422) == ""
    # Outages are not configuration problems (they pause after the step's retries).
    assert problem(503) == "" and errors.is_infrastructure(_refusal(503, ""))
    down = errors.endpoint_unavailable(_refusal(401, "{}"), role="writer", endpoint="e")
    assert isinstance(down, errors.EndpointUnavailable) and down.configuration
    assert (
        errors.endpoint_unavailable(_refusal(400, CONTEXT_TOO_LONG), role="writer", endpoint="e")
        is None
    )
