"""``LLMClient``: the one way the engine talks to a model.

Every call, successful or not, leaves an LLMCall row (except calls refused before sending:
a missing API key variable, an exhausted budget). See the package docstring for the contract.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings

from . import cassette as cassettes
from .errors import LLMError, ReplayMissError
from .limiter import limiter_for
from .remote import RemoteFailure, auth_headers, post_chat
from .services import call_cost, campaign_budget_reserve, llm_call_begin, llm_call_record

ROLE_MAX_LENGTH = 30
TEMPLATE_MAX_LENGTH = 100
TEMPLATE_VERSION_MAX_LENGTH = 20


@dataclass(frozen=True)
class CallContext:
    """What a call is charged to and filed under."""

    campaign_id: int | None = None
    lineage_id: int | None = None
    candidate_id: int | None = None


@dataclass(frozen=True)
class ChatResult:
    content: str
    tokens_in: int
    tokens_out: int
    cost: Decimal
    latency_ms: int
    call_id: int
    replayed: bool


class LLMClient:
    """Chat completions against one ModelEndpoint, charged to one CallContext.

    Thread-safe: one client may serve several threads. ``sleep`` is the backoff wait
    (injectable so tests can observe the delays without sleeping through them).
    """

    def __init__(self, endpoint, context: CallContext = CallContext(), *, sleep=time.sleep):
        if endpoint.pk is None:
            raise ValueError("LLMClient needs a saved ModelEndpoint")
        self.endpoint = endpoint
        self.context = context
        self._sleep = sleep
        self._limiter = None

    def chat(
        self,
        messages: list[dict],
        *,
        role: str,
        template: str = "",
        template_version: str = "",
        replay_key: str = "",
        temperature: float | None = None,
        max_tokens: int | None = None,
        response_format: dict | None = None,
    ) -> ChatResult:
        """Send ``messages``; return the answer, or raise an LLMError.

        Raises BudgetExhausted before sending if the campaign's budget is reached, LLMError
        if the endpoint's key variable is unset (nothing sent, nothing recorded), and
        LLMTransportError when retries run out (recorded with status "error").

        Call it outside ``transaction.atomic()``: the budget reservation locks the campaign
        row until the surrounding transaction ends (serialising the campaign's calls for the
        whole request), and a rollback would erase the call's log row and charges.
        """
        _check_length("role", role, ROLE_MAX_LENGTH, required=True)
        _check_length("template", template, TEMPLATE_MAX_LENGTH)
        _check_length("template_version", template_version, TEMPLATE_VERSION_MAX_LENGTH)
        if not isinstance(messages, list) or not messages:
            raise ValueError("messages must be a non-empty list of chat messages")
        endpoint = self.endpoint
        body = self._body(messages, temperature, max_tokens, response_format)
        headers = {}
        if not endpoint.is_replay:
            headers = {**auth_headers(endpoint), "X-BenchForge-Role": role}
            if replay_key:
                # Harmless to real servers; lets a recording proxy or the loopback test server
                # key scripted answers exactly as a replay cassette does.
                headers["X-BenchForge-Key"] = replay_key
        if self.context.campaign_id is not None:
            campaign_budget_reserve(campaign_id=self.context.campaign_id)

        record = dict(
            endpoint=endpoint,
            context=self.context,
            role=role,
            template=template,
            template_version=template_version,
            request_json=cassettes.canonical_json(body),
        )
        fp = cassettes.fingerprint(model=endpoint.model, messages=messages)
        if endpoint.is_replay:
            return self._replay(record, role=role, key=replay_key, fp=fp)
        return self._remote(record, body=body, headers=headers, role=role, key=replay_key, fp=fp)

    def chat_template(
        self, messages: list[dict], template, *, role: str, replay_key: str, **options
    ) -> ChatResult:
        """``chat`` for messages rendered from a prompt template (``evolution.llm.prompts``):
        the call is recorded with the template's name and version."""
        return self.chat(
            messages,
            role=role,
            template=template.name,
            template_version=template.version,
            replay_key=replay_key,
            **options,
        )

    def _body(self, messages, temperature, max_tokens, response_format) -> dict:
        endpoint = self.endpoint
        # extra_params first: the admin's additions must not override the call's own fields.
        body = dict(endpoint.extra_params or {})
        body["model"] = endpoint.model
        body["messages"] = messages
        # An endpoint that omits temperature gets none (APIs accepting only their default
        # answer 400 to any other); no temperature set anywhere also sends none.
        if not endpoint.omit_temperature:
            value = endpoint.temperature if temperature is None else temperature
            if value is not None:
                body["temperature"] = value
        if endpoint.reasoning_effort:
            body["reasoning_effort"] = endpoint.reasoning_effort
        if endpoint.top_p is not None:
            body["top_p"] = endpoint.top_p
        tokens = endpoint.max_tokens if max_tokens is None else max_tokens
        if tokens is not None:
            body["max_tokens"] = tokens
        if response_format is not None:
            body["response_format"] = response_format
        return body

    def _slot(self):
        if self._limiter is None:
            self._limiter = limiter_for(self.endpoint)
        return self._limiter.slot()

    def _remote(self, record, *, body, headers, role, key, fp) -> ChatResult:
        # The ledger row exists before the request leaves; the outcome completes it.
        record = dict(record, call=llm_call_begin(**record))
        started = time.perf_counter()
        try:
            exchange = post_chat(
                self.endpoint, body=body, headers=headers, slot=self._slot, sleep=self._sleep
            )
        except RemoteFailure as exc:
            call = llm_call_record(
                **record,
                response_text=exc.body,
                latency_ms=_ms(exc.latency_s),
                tries=exc.tries,
                http_status=exc.status,
                status="error",
                error=str(exc),
            )
            exc.call_id = call.pk
            raise
        except Exception as exc:
            # Limiter or programming failure: still a started call, so it is logged.
            call = llm_call_record(
                **record,
                response_text=None,
                latency_ms=_ms(time.perf_counter() - started),
                tries=0,
                status="error",
                error=f"{exc.__class__.__name__}: {exc}",
            )
            if isinstance(exc, LLMError):
                exc.call_id = call.pk
            raise
        call = llm_call_record(
            **record,
            response_text=exchange.response_text,
            tokens_in=exchange.tokens_in,
            tokens_out=exchange.tokens_out,
            latency_ms=_ms(exchange.latency_s),
            tries=exchange.tries,
            http_status=exchange.http_status,
            status="ok",
        )
        if self.endpoint.cassette and settings.LLM_RECORD:
            cassettes.append(
                cassettes.resolve_path(self.endpoint.cassette),
                role=role,
                key=key,
                fp=fp,
                content=exchange.content,
                tokens_in=exchange.tokens_in,
                tokens_out=exchange.tokens_out,
            )
        return ChatResult(
            content=exchange.content,
            tokens_in=exchange.tokens_in,
            tokens_out=exchange.tokens_out,
            cost=call.cost,
            latency_ms=call.latency_ms,
            call_id=call.pk,
            replayed=False,
        )

    def _replay(self, record, *, role, key, fp) -> ChatResult:
        try:
            if not self.endpoint.cassette:
                raise LLMError(f"replay endpoint {self.endpoint.name!r} names no cassette")
            found = cassettes.load(cassettes.resolve_path(self.endpoint.cassette)).find(
                role=role, key=key, fp=fp
            )
            if found is None:
                raise ReplayMissError(
                    f"no recorded response for role={role} key={key or '(none)'} "
                    f"in cassette {self.endpoint.cassette}"
                )
        except LLMError as exc:
            call = llm_call_record(
                **record, response_text=None, status="error", error=str(exc), replayed=True
            )
            exc.call_id = call.pk
            raise
        call = llm_call_record(
            **record,
            response_text=cassettes.canonical_json(
                {
                    "content": found.content,
                    "tokens_in": found.tokens_in,
                    "tokens_out": found.tokens_out,
                }
            ),
            tokens_in=found.tokens_in,
            tokens_out=found.tokens_out,
            latency_ms=0,
            tries=1,
            status="ok",
            replayed=True,
        )
        return ChatResult(
            content=found.content,
            tokens_in=found.tokens_in,
            tokens_out=found.tokens_out,
            cost=call_cost(self.endpoint, tokens_in=found.tokens_in, tokens_out=found.tokens_out),
            latency_ms=0,
            call_id=call.pk,
            replayed=True,
        )


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))


def _check_length(name: str, value: str, limit: int, *, required: bool = False) -> None:
    if required and not value:
        raise ValueError(f"{name} is required")
    if len(value) > limit:
        raise ValueError(f"{name} must be at most {limit} characters, got {len(value)}")
