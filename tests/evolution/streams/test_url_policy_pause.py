"""Every kind: a campaign whose model endpoint's URL the endpoint URL policy refuses (a row
written before the policy, or by raw SQL: a private address) pauses at the first refused call
naming the policy, as for any refusal of the endpoint's configuration, instead of retrying an
"outage" that asking again cannot end; and nothing is sent past loopback."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from evolution.models import ModelEndpoint, StepFailure
from evolution.models.campaigns import CampaignState
from evolution.streams import runner
from evolution.streams.kinds import kind_for

from .test_contract import KINDS, build, first_stream, given_up

pytestmark = pytest.mark.django_db(transaction=True)

REFUSED = "http://10.255.255.1:6379/v1"


@pytest.fixture
def connections(monkeypatch):
    outside = []
    connect = socket.socket.connect

    def guarded(self, address):
        host = address[0].split("%", 1)[0] if isinstance(address, tuple) else None
        if host is not None and not ipaddress.ip_address(host).is_loopback:
            outside.append(host)
            raise ConnectionRefusedError(f"the test refuses a connection to {host}")
        return connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    return outside


@pytest.fixture
def fake_server():
    from tests.support.fake_openai import FakeOpenAI

    with FakeOpenAI() as server:
        yield server


@pytest.mark.parametrize("kind_name", KINDS)
def test_an_endpoint_url_the_policy_refuses_pauses_at_the_first_call(
    kind_name, fake_server, connections
):
    kind = kind_for(kind_name)
    campaign = build(kind_name, fake_server)
    sid = first_stream(kind, campaign)
    # BenchEvolver's panel measures with a policy of its own (tests/evolution/benchevolver): its
    # evolver is the endpoint refused here; every other kind's endpoints all are.
    refused = ModelEndpoint.objects.all()
    if kind_name == "benchevolver":
        refused = refused.filter(pk=campaign.evolver_id)
    refused.update(base_url=REFUSED)

    for _ in range(60):  # steps before the first model call (if any) go on
        report = runner.advance(kind=kind_name, stream_id=sid)
        if report.outcome != "done":
            break
    assert report.outcome == "error", report

    campaign.refresh_from_db()
    assert campaign.state == CampaignState.PAUSED
    reason = campaign.state_reason
    assert reason.startswith("endpoint configuration (") and "was not called" in reason, reason
    assert "refused by the endpoint URL policy: 10.255.255.1 is a private" in reason, reason
    assert not given_up(kind, campaign)
    failures = list(StepFailure.objects.filter(campaign=campaign))
    assert [(f.consequence, f.infrastructure) for f in failures] == [("paused", True)]
    assert connections == []
