"""The ``openai`` provider: POST /chat/completions over httpx with bounded, jittered retries.

Retried: HTTP 429 (waiting what ``Retry-After`` asks), 408 and 5xx, timeouts, dropped or
reset connections, and 200 answers whose body is not a chat completion (invalid JSON, no
``choices[0].message.content``). Anything else (400, 401, 404, a redirect, a destination the
endpoint URL policy refuses, ...) fails at once: repeating a request the server rejected
cannot help. After ``max_retries`` retries the last failure is raised as
``LLMTransportError``.

Destinations: every request goes through ``urlpolicy.GuardedTransport`` (the host resolved,
every address checked, the connection made to a checked one) and redirects are never
followed, so a request, and the key it carries, reaches only the endpoint's own host.

A failure's message says what went wrong (``failure_reason``: a status and a short classified
reason), never the reply's body: the body is recorded in the call's ledger row only.

A concurrency slot is held only while a request is on the wire, not during backoff, so a
failing call does not starve the others.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import os
import random
import socket
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import httpx
from django.conf import settings

from evolution.policy import secrets, urlpolicy

from .errors import LLMError, LLMTransportError

logger = logging.getLogger(__name__)

# Never wait longer than this for one Retry-After, whatever the server asks.
RETRY_AFTER_MAX_S = 600.0

# The pooled clients of this process, most recently used last. At most CLIENTS_KEPT: a process
# that talks to many base URLs over its life (a test run's loopback servers, an operator trying
# endpoints) would otherwise keep every pool's sockets open. A client dropped from here is not
# closed (a call in flight may still hold it); its sockets close when the last holder lets go.
CLIENTS_KEPT = 64
_clients: OrderedDict[tuple[int, str, float], httpx.Client] = OrderedDict()
_clients_lock = threading.Lock()


def http_client(*, base_url: str, timeout_s: float) -> httpx.Client:
    """A pooled httpx client per process, base URL and timeout (pools must not cross a fork)."""
    key = (os.getpid(), base_url, timeout_s)
    with _clients_lock:
        client = _clients.get(key)
        if client is not None:
            _clients.move_to_end(key)
            return client
        client = httpx.Client(
            base_url=base_url.rstrip("/") + "/",
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 30.0)),
            transport=urlpolicy.GuardedTransport(
                limits=httpx.Limits(max_connections=512, max_keepalive_connections=128)
            ),
            # The key goes to the endpoint's own host only: a redirect is a failure.
            follow_redirects=False,
        )
        _clients[key] = client
        while len(_clients) > CLIENTS_KEPT:
            _clients.popitem(last=False)
    return client


def auth_headers(endpoint) -> dict[str, str]:
    """``Authorization`` for endpoints that name a key variable; LLMError if it is unset."""
    if not endpoint.api_key_env:
        return {}
    # Checked again at send time: a row written before the policy, or through raw SQL, must
    # not make the worker send one of its own secrets to the endpoint's URL.
    if not secrets.key_env_allowed(endpoint.api_key_env):
        raise LLMError(
            f"endpoint {endpoint.name!r} names an API key variable outside the allowed ones "
            f"({secrets.key_env_problem(endpoint.api_key_env)})"
        )
    key = os.environ.get(endpoint.api_key_env)
    if not key:
        raise LLMError(
            f"endpoint {endpoint.name!r} needs its API key in the environment variable "
            f"{endpoint.api_key_env}, which is not set"
        )
    return {"Authorization": f"Bearer {key}"}


@dataclass
class Exchange:
    """A successful completion: parsed content and usage, plus what to record."""

    content: str
    tokens_in: int
    tokens_out: int
    response_text: str
    http_status: int
    tries: int
    latency_s: float


# What went wrong, as ``RemoteFailure.kind``: ``failure_reason`` words each.
POLICY = "policy"  # the endpoint URL policy refused the destination; nothing was sent
HTTP = "http"  # an HTTP answer other than 200 (``status``)
REDIRECT = "redirect"  # a 3xx: never followed
MALFORMED = "malformed"  # a 200 whose body is not a chat completion
TIMEOUT = "timeout"
REFUSED = "refused"  # the connection was refused (nothing listens on that port)
UNRESOLVABLE = "unresolvable"  # the host name does not resolve
TLS = "tls"  # the TLS handshake failed (certificate, protocol)
CONNECTION = "connection"  # any other transport failure (reset, closed, unreachable)


class _Retryable(Exception):
    def __init__(
        self,
        reason: str,
        *,
        status: int | None,
        body: str,
        retry_after: float | None,
        kind: str = HTTP,
    ):
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.body = body
        self.retry_after = retry_after
        self.kind = kind


class RemoteFailure(LLMTransportError):
    """LLMTransportError carrying what the recorder needs (last body, time spent) and what
    went wrong (``kind``, one of the constants above). The message never holds the body."""

    def __init__(
        self,
        message,
        *,
        status,
        tries,
        body: str,
        latency_s: float,
        kind: str = HTTP,
        detail: str = "",
    ):
        super().__init__(message, status=status, tries=tries)
        self.body = body
        self.latency_s = latency_s
        self.kind = kind
        self.detail = detail  # a policy refusal's reason


# What a provider's refusal means, by status.
_STATUS_REASONS = {
    400: "the provider refused the request",
    401: "the provider refused the key",
    402: "the provider refused the account (payment required)",
    403: "the provider refused access (the key or the account lacks permission)",
    404: "nothing answers chat completions at this URL for this model",
    405: "this URL does not take chat completions (method not allowed)",
    408: "the provider timed out",
    413: "the request is larger than the provider accepts",
    422: "the provider refused the request",
    429: "the provider is rate limiting",
}


def _refused_parameter(body: str) -> str:
    """The request field an OpenAI-style 400 names (``{"error": {"param": ...}}``), when it
    is a plain field name; "" otherwise. Only this name is ever read out of a body."""
    try:
        data = json.loads(body)
        param = data["error"]["param"]
    except (ValueError, KeyError, TypeError):
        return ""
    if isinstance(param, str) and 0 < len(param) <= 40 and param.replace("_", "").isalnum():
        return param
    return ""


def failure_reason(exc: BaseException) -> str:
    """A status and a short classified reason for a failed call, never the reply's body:
    "HTTP 401: the provider refused the key", "connection refused", "timed out", "not an
    OpenAI-compatible reply", "refused by the endpoint URL policy: ..."."""
    return describe_failure(
        getattr(exc, "kind", ""),
        status=getattr(exc, "status", None),
        body=getattr(exc, "body", "") or "",
        detail=getattr(exc, "detail", "") or str(exc),
    )


def describe_failure(kind: str, *, status: int | None = None, body: str = "", detail: str = ""):
    """``failure_reason`` from its parts: ``kind`` (one of the constants above), the HTTP
    status, the body (of which only a refused parameter's name is read) and, for a policy
    refusal or an unknown kind, ``detail``."""
    if kind == POLICY:
        return f"refused by the endpoint URL policy: {detail}"
    if kind == MALFORMED:
        return "not an OpenAI-compatible reply"
    if kind == REDIRECT:
        return (
            f"HTTP {status}: the endpoint redirects elsewhere; redirects are not followed "
            "(give the final URL)"
        )
    if kind == TIMEOUT:
        return "timed out"
    if kind == REFUSED:
        return "connection refused"
    if kind == UNRESOLVABLE:
        return "the host name does not resolve"
    if kind == TLS:
        return "the TLS handshake failed (certificate or protocol)"
    if kind == CONNECTION:
        return "the connection failed (reset, closed or unreachable)"
    if status is None:
        return detail
    if status >= 500:
        return f"HTTP {status}: the provider failed (server error)"
    reason = _STATUS_REASONS.get(status, "an unexpected answer")
    if status == 400 and (param := _refused_parameter(body)):
        reason = f"the provider refused the parameter {param!r}"
    return f"HTTP {status}: {reason}"


def _transport_kind(exc: BaseException) -> str:
    """Which transport failure ``exc`` (an httpx error) is, from its chain of causes."""
    seen = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, urlpolicy.HostUnresolvable | socket.gaierror):
            return UNRESOLVABLE
        if isinstance(cause, ConnectionRefusedError):
            return REFUSED
        if isinstance(cause, ssl.SSLError):
            return TLS
        cause = cause.__cause__ or cause.__context__
    return CONNECTION


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP date); None if absent/garbled."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_MAX_S)


def backoff_delay(attempt: int, *, retry_after: float | None) -> float:
    """Wait before retry number ``attempt`` (0-based): Retry-After if given, else full jitter."""
    if retry_after is not None:
        return retry_after
    ceiling = min(settings.LLM_BACKOFF_MAX_S, settings.LLM_BACKOFF_BASE_S * (2**attempt))
    return random.uniform(0, ceiling)


def _estimate_tokens(chars: int) -> int:
    # Servers that omit usage still cost something; about four characters per token.
    return math.ceil(chars / 4)


def parse_completion(text: str, *, prompt_chars: int) -> tuple[str, int, int]:
    """(content, tokens_in, tokens_out) from a chat completion body, or ValueError saying why."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"response body is not JSON ({exc})")
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ValueError("response lacks choices[0].message.content")
    if not isinstance(content, str):
        raise ValueError("choices[0].message.content is not a string")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    try:
        tokens_in = int(usage["prompt_tokens"])
    except (KeyError, TypeError, ValueError):
        tokens_in = _estimate_tokens(prompt_chars)
    try:
        tokens_out = int(usage["completion_tokens"])
    except (KeyError, TypeError, ValueError):
        tokens_out = _estimate_tokens(len(content))
    return content, max(tokens_in, 0), max(tokens_out, 0)


def _attempt(client: httpx.Client, body_bytes: bytes, headers: dict, prompt_chars: int):
    try:
        response = client.post("chat/completions", content=body_bytes, headers=headers)
    except urlpolicy.DestinationRefused as exc:
        # Nothing was sent; asking again would be refused again.
        raise RemoteFailure(
            describe_failure(POLICY, detail=exc.reason),
            status=None,
            tries=0,
            body="",
            latency_s=0.0,
            kind=POLICY,
            detail=exc.reason,
        )
    except httpx.TimeoutException as exc:
        raise _Retryable(
            f"timed out ({exc.__class__.__name__})",
            status=None,
            body="",
            retry_after=None,
            kind=TIMEOUT,
        )
    except httpx.TransportError as exc:
        kind = _transport_kind(exc)
        raise _Retryable(
            f"{describe_failure(kind)} ({exc.__class__.__name__})",
            status=None,
            body="",
            retry_after=None,
            kind=kind,
        )
    text = response.text
    status = response.status_code
    if status == 429 or status == 408 or status >= 500:
        raise _Retryable(
            f"HTTP {status}",
            status=status,
            body=text,
            retry_after=parse_retry_after(response.headers.get("retry-after")),
        )
    if status != 200:
        # Not retried: the server refused this request and would refuse it again (a redirect
        # is not followed: the key goes to the endpoint's own host only).
        kind = REDIRECT if 300 <= status < 400 else HTTP
        raise RemoteFailure(
            describe_failure(kind, status=status, body=text),
            status=status,
            tries=0,
            body=text,
            latency_s=0.0,
            kind=kind,
        )
    try:
        content, tokens_in, tokens_out = parse_completion(text, prompt_chars=prompt_chars)
    except ValueError as exc:
        raise _Retryable(
            f"malformed response: {exc}",
            status=status,
            body=text,
            retry_after=None,
            kind=MALFORMED,
        )
    return content, tokens_in, tokens_out, text, status


def post_chat(
    endpoint,
    *,
    body: dict,
    headers: dict[str, str],
    slot: Callable,
    sleep: Callable[[float], None] = time.sleep,
) -> Exchange:
    """Send ``body`` with retries; raise RemoteFailure (an LLMTransportError) when they run out.

    ``slot`` is a context-manager factory (the endpoint's limiter) held around each request.
    ``latency_s`` counts requests and backoff, not time spent waiting for a slot.
    """
    try:
        # Also here, not only at save: a row written before the policy, or through raw SQL.
        urlpolicy.check_url(endpoint.base_url)
    except urlpolicy.DestinationRefused as exc:
        raise RemoteFailure(
            f"{endpoint.name}: {describe_failure(POLICY, detail=exc.reason)}",
            status=None,
            tries=0,
            body="",
            latency_s=0.0,
            kind=POLICY,
            detail=exc.reason,
        )
    client = http_client(base_url=endpoint.base_url, timeout_s=float(endpoint.timeout_s))
    body_bytes = json.dumps(body, ensure_ascii=False).encode("utf-8")
    headers = {"Content-Type": "application/json", **headers}
    prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
    max_retries = int(endpoint.max_retries)
    spent = 0.0
    tries = 0
    while True:
        with slot():
            started = time.perf_counter()
            tries += 1
            try:
                content, tokens_in, tokens_out, text, status = _attempt(
                    client, body_bytes, headers, prompt_chars
                )
            except _Retryable as failure:
                spent += time.perf_counter() - started
                last = failure
            except RemoteFailure as failure:
                spent += time.perf_counter() - started
                failure.tries = tries
                failure.latency_s = spent
                raise
            else:
                spent += time.perf_counter() - started
                return Exchange(content, tokens_in, tokens_out, text, status, tries, spent)
        if tries > max_retries:
            raise RemoteFailure(
                f"{endpoint.name}: {last.reason} after {tries} tries",
                status=last.status,
                tries=tries,
                body=last.body,
                latency_s=spent,
                kind=last.kind,
            )
        delay = backoff_delay(tries - 1, retry_after=last.retry_after)
        # The key is in `headers`, which is never logged; only the failure reason is.
        logger.warning(
            "model call to %s failed (%s), try %d of %d; retrying in %.2f s",
            endpoint.name,
            last.reason,
            tries,
            max_retries + 1,
            delay,
        )
        sleep(delay)
        spent += delay
