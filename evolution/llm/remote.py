"""The ``openai`` provider: POST /chat/completions over httpx with bounded, jittered retries.

Retried: HTTP 429 (waiting what ``Retry-After`` asks), 408 and 5xx, timeouts, dropped or
reset connections, and 200 answers whose body is not a chat completion (invalid JSON, no
``choices[0].message.content``). Anything else (400, 401, 404, ...) fails at once: repeating
a request the server rejected cannot help. After ``max_retries`` retries the last failure is
raised as ``LLMTransportError``.

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
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx
from django.conf import settings

from . import secrets
from .errors import LLMError, LLMTransportError

logger = logging.getLogger(__name__)

# Never wait longer than this for one Retry-After, whatever the server asks.
RETRY_AFTER_MAX_S = 600.0

_clients: dict[tuple[int, str, float], httpx.Client] = {}
_clients_lock = threading.Lock()


def http_client(*, base_url: str, timeout_s: float) -> httpx.Client:
    """A pooled httpx client per process, base URL and timeout (pools must not cross a fork)."""
    key = (os.getpid(), base_url, timeout_s)
    client = _clients.get(key)
    if client is None:
        with _clients_lock:
            client = _clients.get(key)
            if client is None:
                client = httpx.Client(
                    base_url=base_url.rstrip("/") + "/",
                    timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 30.0)),
                    limits=httpx.Limits(max_connections=512, max_keepalive_connections=128),
                    follow_redirects=False,
                )
                _clients[key] = client
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


class _Retryable(Exception):
    def __init__(self, reason: str, *, status: int | None, body: str, retry_after: float | None):
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.body = body
        self.retry_after = retry_after


class RemoteFailure(LLMTransportError):
    """LLMTransportError carrying what the recorder needs (last body, time spent)."""

    def __init__(self, message, *, status, tries, body: str, latency_s: float):
        super().__init__(message, status=status, tries=tries)
        self.body = body
        self.latency_s = latency_s


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
    except httpx.TimeoutException as exc:
        raise _Retryable(
            f"timed out ({exc.__class__.__name__})", status=None, body="", retry_after=None
        )
    except httpx.TransportError as exc:
        raise _Retryable(
            f"connection failed ({exc.__class__.__name__}: {exc})",
            status=None,
            body="",
            retry_after=None,
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
        # Not retried: the server refused this request and would refuse it again.
        raise RemoteFailure(
            f"HTTP {status}: {text[:300]}", status=status, tries=0, body=text, latency_s=0.0
        )
    try:
        content, tokens_in, tokens_out = parse_completion(text, prompt_chars=prompt_chars)
    except ValueError as exc:
        raise _Retryable(f"malformed response: {exc}", status=status, body=text, retry_after=None)
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
