"""Every exchange is logged: context, role, template, request and response, usage, status."""

from __future__ import annotations

import json
import logging
from decimal import Decimal

import pytest

from evolution.benchevolver.engine.prompts import load as load_benchevolver_prompt
from evolution.llm import CallContext, LLMClient, LLMError, LLMTransportError
from evolution.models import LLMCall
from tests.factories import CandidateFactory, ModelEndpointFactory
from tests.support.fake_openai import Fault, Reply

MESSAGES = [
    {"role": "system", "content": "You write Python."},
    {"role": "user", "content": "add two numbers"},
]


def test_it_records_a_successful_call_with_its_context_and_usage(endpoint, fake):
    endpoint.price_in_per_1k = Decimal("0.5")
    endpoint.price_out_per_1k = Decimal("2")
    endpoint.save()
    candidate = CandidateFactory()
    lineage = candidate.lineage
    context = CallContext(
        campaign_id=lineage.campaign_id, lineage_id=lineage.pk, candidate_id=candidate.pk
    )
    fake.script("mutator", [Reply("def add(a, b): ...", prompt_tokens=120, completion_tokens=30)])

    result = LLMClient(endpoint, context).chat(
        MESSAGES, role="mutator", template="mutate", template_version="3"
    )

    call = LLMCall.objects.get(pk=result.call_id)
    assert (call.campaign_id, call.lineage_id, call.candidate_id) == (
        lineage.campaign_id,
        lineage.pk,
        candidate.pk,
    )
    assert (call.role, call.template, call.template_version) == ("mutator", "mutate", "3")
    assert (call.endpoint_id, call.endpoint_name) == (endpoint.pk, endpoint.name)
    assert (call.tokens_in, call.tokens_out) == (120, 30)
    # 120 * 0.5 / 1000 + 30 * 2 / 1000
    assert call.cost == Decimal("0.120000") == result.cost
    assert call.status == "ok" and call.http_status == 200 and call.tries == 1
    assert call.replayed is False
    assert json.loads(call.request_text)["messages"] == MESSAGES
    assert json.loads(call.response_text)["choices"][0]["message"]["content"] == result.content
    assert result.latency_ms == call.latency_ms


def test_a_call_from_a_prompt_template_records_its_name_and_version(endpoint, fake):
    # Every method's context calls the model through chat_template (one place for this).
    template = load_benchevolver_prompt("mutator")
    fake.script("mutator", [Reply("def add(a, b): ...")])

    result = LLMClient(endpoint, CallContext()).chat_template(
        MESSAGES, template, role="mutator", replay_key="seed=1;round=1", temperature=0.3
    )

    call = LLMCall.objects.get(pk=result.call_id)
    assert (call.role, call.template, call.template_version) == (
        "mutator",
        "mutator",
        template.version,
    )
    assert template.version and json.loads(call.request_text)["temperature"] == 0.3


def test_it_sends_endpoint_defaults_and_lets_the_call_override_them(endpoint, fake):
    endpoint.temperature = 0.8
    endpoint.top_p = 0.95
    endpoint.max_tokens = 4000
    endpoint.extra_params = {"seed": 7, "model": "must-not-win"}
    endpoint.save()
    client = LLMClient(endpoint)

    client.chat(MESSAGES, role="solver")
    client.chat(
        MESSAGES,
        role="judge",
        temperature=0.0,
        max_tokens=50,
        response_format={"type": "json_object"},
    )

    first, second = (r.body for r in fake.requests)
    assert first["model"] == "m1"
    assert (first["temperature"], first["top_p"], first["max_tokens"], first["seed"]) == (
        0.8,
        0.95,
        4000,
        7,
    )
    assert "response_format" not in first
    assert (second["temperature"], second["max_tokens"]) == (0.0, 50)
    assert second["response_format"] == {"type": "json_object"}


def test_it_sends_the_role_header_and_no_authorization_without_a_key_variable(endpoint, fake):
    LLMClient(endpoint).chat(MESSAGES, role="test_generator")

    headers = fake.requests[0].headers
    assert headers["x-benchforge-role"] == "test_generator"
    assert "authorization" not in headers


def test_it_sends_the_key_as_a_bearer_token_but_never_stores_or_logs_it(
    endpoint, fake, monkeypatch, caplog
):
    secret = "sk-test-very-secret-4242"
    monkeypatch.setenv("BENCHFORGE_KEY_TEST", secret)
    endpoint.api_key_env = "BENCHFORGE_KEY_TEST"
    endpoint.save()
    fake.script("solver", [Fault.server_error(), Fault.server_error(), Fault.server_error()])
    caplog.set_level(logging.DEBUG)

    with pytest.raises(LLMTransportError):
        LLMClient(endpoint).chat(MESSAGES, role="solver")
    ok = LLMClient(endpoint).chat(MESSAGES, role="solver")

    assert all(r.headers["authorization"] == f"Bearer {secret}" for r in fake.requests)
    assert secret not in caplog.text
    for call in LLMCall.objects.filter(endpoint=endpoint):
        stored = call.request_text + call.response_text + call.error
        assert secret not in stored
    assert ok.content == "ok"


def test_it_refuses_to_send_when_the_key_variable_is_unset(endpoint, fake, monkeypatch):
    monkeypatch.delenv("BENCHFORGE_KEY_MISSING", raising=False)
    endpoint.api_key_env = "BENCHFORGE_KEY_MISSING"
    endpoint.save()

    with pytest.raises(LLMError, match="BENCHFORGE_KEY_MISSING"):
        LLMClient(endpoint).chat(MESSAGES, role="solver")

    assert fake.request_count == 0


def test_it_rejects_a_role_too_long_for_the_log(endpoint, fake):
    with pytest.raises(ValueError, match="role"):
        LLMClient(endpoint).chat(MESSAGES, role="r" * 31)
    assert fake.request_count == 0


def test_it_estimates_usage_when_the_server_reports_none(endpoint, fake):
    fake.script("solver", [Reply("x" * 400, usage=False)])

    result = LLMClient(endpoint).chat([{"role": "user", "content": "y" * 80}], role="solver")

    assert (result.tokens_in, result.tokens_out) == (20, 100)


def test_it_records_a_call_that_the_limiter_could_not_serve(db, fake, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    endpoint = ModelEndpointFactory(base_url=fake.base_url, max_retries=0)

    with pytest.raises(LLMError, match="Redis unavailable") as raised:
        LLMClient(endpoint).chat(MESSAGES, role="solver")

    call = LLMCall.objects.get(pk=raised.value.call_id)
    assert call.status == "error"
    assert fake.request_count == 0
