"""Per-endpoint sampling: what an endpoint is sent is its own parameters, with the campaign's
Table 5 values where it sets none; the campaign page shows exactly what is sent, and the
request timeout in force is the one shown."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evolution.benchevolver.services import campaign_create
from evolution.llm import LLMClient, LLMTransportError
from evolution.llm.sampling import endpoint_for_campaign, resolve_sampling
from tests.factories import (
    ModelEndpointFactory,
    PanelMemberFactory,
    ProblemFactory,
    ProblemSetFactory,
)
from tests.support.fake_openai import FakeOpenAI, Fault

pytestmark = pytest.mark.django_db


def test_unset_fields_take_the_campaigns_values_and_set_ones_win():
    default = ModelEndpointFactory.build(temperature=None, timeout_s=900)
    s = resolve_sampling(default, temperature=0.8, timeout=600)
    assert (s.temperature, s.temperature_source) == (0.8, "campaign")
    assert (s.timeout_s, s.timeout_source) == (600.0, "campaign")
    own = ModelEndpointFactory.build(temperature=0.2, timeout_s=30)
    s = resolve_sampling(own, temperature=0.8, timeout=600)
    assert (s.temperature, s.temperature_source, s.timeout_s) == (0.2, "endpoint", 30.0)
    omitted = ModelEndpointFactory.build(temperature=0.2, omit_temperature=True)
    s = resolve_sampling(omitted, temperature=0.8, timeout=600)
    assert (s.temperature, s.temperature_source) == (None, "omitted")
    assert s.describe().startswith("temperature not sent")


def test_the_request_body_carries_each_endpoint_parameter():
    endpoint = ModelEndpointFactory(
        temperature=None,
        top_p=0.9,
        max_tokens=321,
        reasoning_effort="high",
        extra_params={"seed": 7},
    )
    with FakeOpenAI() as server:
        endpoint.base_url = server.base_url
        endpoint.save()
        resolved = endpoint_for_campaign(endpoint, temperature=0.8, timeout=600)
        LLMClient(resolved).chat([{"role": "user", "content": "hi"}], role="solver")
        body = server.requests[-1].body
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.8, 0.9, 321)
    assert (body["reasoning_effort"], body["seed"]) == ("high", 7)


def test_the_campaign_timeout_caps_the_endpoints_own():
    endpoint = ModelEndpointFactory(timeout_s=30, max_retries=0)
    with FakeOpenAI() as server:
        server.script("solver", [Fault.timeout(2.0)])
        endpoint.base_url = server.base_url
        endpoint.save()
        resolved = endpoint_for_campaign(endpoint, temperature=0.8, timeout=1.0)
        with pytest.raises(LLMTransportError) as info:
            LLMClient(resolved).chat([{"role": "user", "content": "hi"}], role="solver")
    assert info.value.status is None  # no HTTP answer: the 1 s campaign timeout fired


def test_the_campaign_page_shows_what_each_model_is_sent(personas):
    member = PanelMemberFactory(
        attempts=None, endpoint=ModelEndpointFactory(name="o-series", omit_temperature=True)
    )
    campaign = campaign_create(
        name="sampling",
        seed_set=ProblemSetFactory(problems=[ProblemFactory()]),
        evolver=ModelEndpointFactory(name="evolver-x", temperature=0.3, timeout_s=900),
        panel=member.panel,
        settings={"target_eval_k": 3, "timeout": 120},
    )
    page = personas.admin.client.get(
        reverse("evolution:campaign_detail", args=[campaign.pk])
    ).content.decode()
    assert "temperature 0.3 (endpoint) · timeout 120 s (campaign)" in page
    assert "temperature not sent · timeout 30 s (endpoint)" in page
    # The member sets no K of its own: the campaign's target_eval_k is shown and used.
    assert "<td>o-series</td><td>3</td>" in page
