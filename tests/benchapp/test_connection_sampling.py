"""Test connection sends what a campaign sends: an endpoint that refuses the campaign's
sampling fails the test, instead of connecting because the test sent no temperature."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from evolution.models import LLMCall
from tests.factories import ModelEndpointFactory
from tests.support.fake_openai import FakeOpenAI, Fault

REFUSAL = json.dumps(
    {
        "error": {
            "message": "Unsupported value: 'temperature' does not support 0.8 with this model.",
            "type": "invalid_request_error",
            "param": "temperature",
        }
    }
)


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        # A reasoning-style model: any temperature is a 400 naming the parameter.
        fake.responder = lambda body, headers: (
            Fault.http_status(400, REFUSAL) if "temperature" in body else "ready"
        )
        yield fake


def _test(personas, endpoint) -> str:
    response = personas.admin.client.post(
        reverse("staff:endpoint_test", args=[endpoint.pk]), HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_an_endpoint_refusing_the_campaign_temperature_fails_the_test(personas, server):
    endpoint = ModelEndpointFactory(base_url=server.base_url, temperature=None)
    html = _test(personas, endpoint)
    assert 'data-ok="false"' in html and "HTTP 400" in html
    assert "temperature 0.8 (campaign default)" in html
    (call,) = LLMCall.objects.filter(endpoint=endpoint)
    assert json.loads(call.request_text)["temperature"] == 0.8


@pytest.mark.django_db(transaction=True)
def test_an_endpoint_that_omits_temperature_connects_as_its_campaigns_would(personas, server):
    endpoint = ModelEndpointFactory(base_url=server.base_url, omit_temperature=True)
    html = _test(personas, endpoint)
    assert 'data-ok="true"' in html and "temperature not sent" in html
    (call,) = LLMCall.objects.filter(endpoint=endpoint)
    assert "temperature" not in json.loads(call.request_text)


@pytest.mark.django_db(transaction=True)
def test_an_endpoint_temperature_is_the_one_sent(personas, server):
    server.responder = lambda body, headers: "ready"
    endpoint = ModelEndpointFactory(base_url=server.base_url, temperature=0.2)
    html = _test(personas, endpoint)
    assert 'data-ok="true"' in html and "temperature 0.2 (endpoint)" in html
    (call,) = LLMCall.objects.filter(endpoint=endpoint)
    assert json.loads(call.request_text)["temperature"] == 0.2
