""" "Test connection": one small chat call to an endpoint through the project's model client,
so the answer is exactly what a campaign would get (same URL, key variable, sampling, logging).

Sampling: what a campaign with the default settings sends, resolved by the one function the
engine uses (``evolution.llm.sampling.resolve_sampling``): the endpoint's own temperature, or
none when it omits temperature, else Table 5's default temperature. An endpoint that refuses
a temperature (as some reasoning models do) therefore fails the test as it would fail every
campaign call, instead of connecting because the test sent none.

What the page is told: a status and a short classified reason ("HTTP 401: the provider
refused the key", "connection refused", "timed out", "not an OpenAI-compatible reply",
"refused by the endpoint URL policy: ..."), never the reply's body, so the test cannot serve
as a window onto whatever answers at a URL. The destination is checked by the endpoint URL
policy (``evolution.policy.urlpolicy``) like every campaign call's."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass

from evolution.benchevolver.engine.config import EvolutionSettings
from evolution.llm import LLMClient, LLMError
from evolution.llm.cassette import resolve_path
from evolution.llm.remote import failure_reason
from evolution.llm.sampling import resolve_sampling
from evolution.models import LLMCall, ModelEndpoint
from evolution.policy import secrets as key_policy

ROLE = "connection-test"
PROMPT = [{"role": "user", "content": "Reply with the single word: ready"}]
# A test is one attempt (no retries) and never waits longer than this.
TIMEOUT_CAP_S = 30.0


@dataclass(frozen=True)
class ConnectionResult:
    ok: bool
    latency_ms: int
    http_status: int | None
    detail: str  # a short classified outcome; never the reply's body
    call_id: int | None
    sent: str = ""  # the sampling sent, as the campaign page describes it


def endpoint_test_connection(endpoint: ModelEndpoint) -> ConnectionResult:
    """Send one short chat request; never raises. The call is logged like any other (role
    ``connection-test``, no campaign), so a failure also shows among the endpoint's errors."""
    if endpoint.is_replay:
        try:
            path = resolve_path(endpoint.cassette) if endpoint.cassette else None
        except LLMError:
            path = None
        found = bool(path and path.is_file())
        return ConnectionResult(
            ok=found,
            latency_ms=0,
            http_status=None,
            detail=(
                f"replayed endpoint: answers come from the cassette {endpoint.cassette}"
                if found
                else f"replayed endpoint: the cassette {endpoint.cassette or '(none)'} is missing"
            ),
            call_id=None,
        )
    defaults = EvolutionSettings()
    sampling = resolve_sampling(endpoint, temperature=defaults.temperature, timeout=TIMEOUT_CAP_S)
    sent = sampling.describe().replace("(campaign)", "(campaign default)")
    trial = copy.copy(endpoint)  # same row (the call is logged against it), tighter limits
    trial.max_retries = 0
    trial.timeout_s = sampling.timeout_s
    started = time.perf_counter()
    try:
        result = LLMClient(trial).chat(PROMPT, role=ROLE, temperature=sampling.temperature)
    except LLMError as exc:
        call = LLMCall.objects.filter(pk=getattr(exc, "call_id", None)).first()
        return ConnectionResult(
            ok=False,
            latency_ms=round((time.perf_counter() - started) * 1000),
            http_status=getattr(exc, "status", None) or (call.http_status if call else None),
            detail=failure_reason(exc),
            call_id=call.pk if call else None,
            sent=sent,
        )
    except Exception as exc:  # a URL the client cannot even use: say so, do not 500
        return ConnectionResult(
            ok=False,
            latency_ms=round((time.perf_counter() - started) * 1000),
            http_status=None,
            detail=f"the request could not be made ({exc.__class__.__name__})",
            call_id=None,
            sent=sent,
        )
    call = LLMCall.objects.get(pk=result.call_id)
    asked = result.content.strip().strip(".!").lower() == "ready"
    return ConnectionResult(
        ok=True,
        latency_ms=round((time.perf_counter() - started) * 1000),
        http_status=call.http_status,
        detail="an OpenAI-compatible reply"
        + ("; the model answered as asked" if asked else "; the model did not answer as asked"),
        call_id=call.pk,
        sent=sent,
    )


def key_status(endpoint: ModelEndpoint) -> str:
    """What the page may say about the key: never its value, and whether it is set only for
    a variable the policy allows."""
    if not endpoint.api_key_env:
        return "no key sent"
    if not key_policy.key_env_allowed(endpoint.api_key_env):
        return "refused by the key policy"
    return "set" if key_policy.key_env_is_set(endpoint.api_key_env) else "not set in this process"
