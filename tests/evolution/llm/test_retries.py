"""Retries and their limits, one test per injected fault, against the loopback server."""

from __future__ import annotations

import time

import pytest

from evolution.llm import LLMClient, LLMTransportError
from evolution.models import LLMCall
from tests.support.fake_openai import Fault

MESSAGES = [{"role": "user", "content": "solve it"}]

RETRIED_FAULTS = {
    "http_429": Fault.rate_limited(retry_after=0),
    "http_500": Fault.server_error(500),
    "http_503": Fault.server_error(503),
    "malformed_json": Fault.malformed_json(),
    "missing_content": Fault.missing_content(),
    "truncated_body": Fault.truncated_body(),
    "connection_reset": Fault.connection_reset(),
}


@pytest.mark.parametrize("fault", list(RETRIED_FAULTS.values()), ids=list(RETRIED_FAULTS))
def test_it_retries_a_transient_fault_and_returns_the_next_answer(endpoint, fake, fault):
    fake.script("solver", [fault, fault, "recovered"])

    result = LLMClient(endpoint).chat(MESSAGES, role="solver")

    assert result.content == "recovered"
    assert fake.request_count == 3
    call = LLMCall.objects.get(pk=result.call_id)
    assert (call.status, call.tries, call.http_status) == ("ok", 3, 200)


@pytest.mark.parametrize("fault", list(RETRIED_FAULTS.values()), ids=list(RETRIED_FAULTS))
def test_it_gives_up_after_max_retries_and_records_the_failure(endpoint, fake, fault):
    fake.script("solver", [fault] * 10)

    with pytest.raises(LLMTransportError) as raised:
        LLMClient(endpoint).chat(MESSAGES, role="solver")

    # max_retries=2: one try and two retries, never more.
    assert fake.request_count == 3
    assert raised.value.tries == 3
    call = LLMCall.objects.get(pk=raised.value.call_id)
    assert call.status == "error"
    assert call.tries == 3
    assert call.http_status == raised.value.status
    assert call.error
    assert call.tokens_in == call.tokens_out == 0


def test_it_reports_the_last_http_status_when_retries_run_out(endpoint, fake):
    fake.script(
        "solver", [Fault.server_error(502), Fault.server_error(503), Fault.server_error(500)]
    )

    with pytest.raises(LLMTransportError) as raised:
        LLMClient(endpoint).chat(MESSAGES, role="solver")

    assert raised.value.status == 500
    assert "HTTP 500" in str(raised.value)


def test_it_records_a_malformed_response_as_a_failure_with_its_body(endpoint, fake):
    fake.script("writer", [Fault.malformed_json()] * 3)

    with pytest.raises(LLMTransportError) as raised:
        LLMClient(endpoint).chat(MESSAGES, role="writer")

    call = LLMCall.objects.get(pk=raised.value.call_id)
    assert call.status == "error"
    assert "not JSON" in call.error
    assert call.response_text.startswith('{"id": "chatcmpl-fake"')


def test_it_retries_a_timeout_and_succeeds_when_the_server_answers_in_time(endpoint, fake):
    endpoint.timeout_s = 0.3
    endpoint.save()
    fake.script("judge", [Fault.delay(1.0, "too late"), "in time"])

    result = LLMClient(endpoint).chat(MESSAGES, role="judge")

    assert result.content == "in time"
    assert LLMCall.objects.get(pk=result.call_id).tries == 2


def test_it_gives_up_on_repeated_timeouts_with_no_status(endpoint, fake):
    endpoint.timeout_s = 0.2
    endpoint.max_retries = 1
    endpoint.save()
    fake.script("judge", [Fault.delay(1.0)] * 2)

    with pytest.raises(LLMTransportError) as raised:
        LLMClient(endpoint).chat(MESSAGES, role="judge")

    assert raised.value.status is None
    assert raised.value.tries == 2
    assert "timed out" in str(raised.value)


def test_it_does_not_retry_a_client_error(endpoint, fake):
    fake.script("solver", [Fault.http_status(400, '{"error":"bad model"}'), "never reached"])

    with pytest.raises(LLMTransportError) as raised:
        LLMClient(endpoint).chat(MESSAGES, role="solver")

    assert fake.request_count == 1
    assert raised.value.status == 400
    assert LLMCall.objects.get(pk=raised.value.call_id).tries == 1


def test_it_waits_what_retry_after_asks_before_retrying(endpoint, fake):
    fake.script("solver", [Fault.rate_limited(retry_after=1), "after the wait"])

    started = time.monotonic()
    result = LLMClient(endpoint).chat(MESSAGES, role="solver")

    assert result.content == "after the wait"
    assert time.monotonic() - started >= 1.0


def test_it_backs_off_exponentially_with_jitter_within_the_cap(endpoint, fake, settings):
    settings.LLM_BACKOFF_BASE_S = 1.0
    settings.LLM_BACKOFF_MAX_S = 3.0
    endpoint.max_retries = 4
    endpoint.save()
    fake.script("solver", [Fault.server_error()] * 4 + ["done"])
    waits: list[float] = []

    LLMClient(endpoint, sleep=waits.append).chat(MESSAGES, role="solver")

    # Full jitter: retry n waits uniformly in [0, min(cap, base * 2**n)].
    assert len(waits) == 4
    for n, wait in enumerate(waits):
        assert 0 <= wait <= min(3.0, 2**n)


def test_it_never_retries_when_max_retries_is_zero(endpoint, fake):
    endpoint.max_retries = 0
    endpoint.save()
    fake.script("solver", [Fault.server_error(), "unused"])

    with pytest.raises(LLMTransportError):
        LLMClient(endpoint).chat(MESSAGES, role="solver")

    assert fake.request_count == 1


def test_a_stored_infra_error_says_its_status_once():
    from evolution.judging.attempts import infra_error_text

    assert infra_error_text({"status": 400, "message": "HTTP 400: the provider refused"}) == (
        "HTTP 400: the provider refused"
    )
    assert infra_error_text({"status": 503, "message": "busy"}) == "HTTP 503: busy"
    assert infra_error_text({"message": "timed out"}) == "no HTTP answer: timed out"
    assert infra_error_text({}) == "no HTTP answer"
