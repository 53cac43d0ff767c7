"""Which failures are the infrastructure's and which are an item's.

Infrastructure failures (the sandbox itself, the database, a model endpoint that stayed
unreachable after the client's retries) are never blamed on a unit: after the retry limit the
campaign pauses with the reason, and an admin resumes it once the outage is over. Every other
exception is the item's: after the retry limit the kind gives up on that item.
"""

from __future__ import annotations

import re

from django.db import DatabaseError, InterfaceError, OperationalError

from evolution.llm.errors import LLMTransportError
from evolution.llm.remote import POLICY
from evolution.sandbox.types import SandboxError


class SandboxFailure(SandboxError):
    """The sandbox itself failed (verdict SE) while a stage ran programs: never blamed on a
    program; the step is retried, and the campaign pauses if it keeps failing."""


class EndpointUnavailable(Exception):
    """A model call a stage depends on (mutator, writer, test generator, judge...) failed for
    transport or provider reasons after the client's retries, or was refused because of the
    endpoint's configuration (``configuration``: a key, a model name, a parameter the provider
    refuses; see ``configuration_problem``): the item is not at fault. Deliberately not an
    ``LLMError``, so stage code that turns a bad answer into the item's decision lets it
    through to the runner, which pauses the campaign with this message, naming the endpoint
    and the status: at once for a configuration problem (asking again cannot help), after the
    step's retries for an outage."""

    def __init__(self, *, role: str, endpoint: str, cause: BaseException, configuration: str = ""):
        status = getattr(cause, "status", None)
        if configuration and status is None:  # refused before anything was sent
            message = (
                f"{role} endpoint {endpoint!r} was not called ({configuration}; fix the "
                f"endpoint, then resume): {cause}"
            )
        elif configuration:
            message = (
                f"{role} endpoint {endpoint!r} refused the request with HTTP {status} "
                f"({configuration}; fix the endpoint, then resume): {cause}"
            )
        else:
            message = f"{role} endpoint {endpoint!r} unavailable: {cause}"
        super().__init__(message)
        self.role = role
        self.endpoint = endpoint
        self.cause = cause
        self.configuration = configuration


# Request fields that carry the prompt itself: a 400 naming one of them (e.g. a context too
# long) is about this request's content, not the endpoint's configuration.
CONTENT_PARAMS = frozenset({"messages", "prompt", "input", "content"})


def _refused_param(exc: BaseException) -> str:
    """The request field a provider's 400 names (OpenAI-style ``{"error": {"param": ...}}``)."""
    text = getattr(exc, "body", "") or str(exc)
    match = re.search(r'"param"\s*:\s*"([^"]+)"', text)
    return match.group(1) if match else ""


def configuration_problem(exc: BaseException) -> str:
    """What about the endpoint's configuration a model call's HTTP 4xx refuses ("" when it is
    not one): 401 and 403 (the key or the account), 404 (the model name or the URL), or a 400
    naming a request parameter other than the prompt (a sampling parameter the model does not
    support, such as a temperature other than 1 on a reasoning model); or its URL, which the
    endpoint URL policy refused before anything was sent."""
    if not isinstance(exc, LLMTransportError):
        return ""
    if getattr(exc, "kind", "") == POLICY:
        return "its URL is refused by the endpoint URL policy"
    status = exc.status
    if status in (401, 403):
        return "the API key or the account is refused"
    if status == 404:
        return "the model or the URL does not exist"
    if status == 400:
        param = _refused_param(exc)
        if param and param not in CONTENT_PARAMS:
            return f"the parameter {param!r} is refused"
    return ""


def endpoint_unavailable(exc: BaseException, *, role: str, endpoint: str):
    """``exc`` as an ``EndpointUnavailable`` when it is an infrastructure failure of a model
    call (see ``is_infrastructure``) or a refusal of the endpoint's configuration (see
    ``configuration_problem``), else None (an answer about this request stays the item's)."""
    if not isinstance(exc, LLMTransportError):
        return None
    problem = configuration_problem(exc)
    if problem:
        return EndpointUnavailable(role=role, endpoint=endpoint, cause=exc, configuration=problem)
    if is_infrastructure(exc):
        return EndpointUnavailable(role=role, endpoint=endpoint, cause=exc)
    return None


def configuration_refused(exc: BaseException, *, role: str, endpoint: str):
    """``exc`` as an ``EndpointUnavailable`` when it refuses the endpoint's configuration (see
    ``configuration_problem``), else None. Outages are left as they are: each kind keeps its
    own handling of those."""
    problem = configuration_problem(exc)
    if not problem:
        return None
    return EndpointUnavailable(role=role, endpoint=endpoint, cause=exc, configuration=problem)


class UndeclaredTransition(Exception):
    """A unit was asked to move along an edge its kind does not declare."""


def is_infrastructure(exc: BaseException) -> bool:
    if isinstance(exc, SandboxError | DatabaseError | InterfaceError | EndpointUnavailable):
        return True
    if is_connection_error(exc):  # e.g. a model call whose limiter lost Redis
        return True
    if isinstance(exc, LLMTransportError):
        # No HTTP answer at all (time-out, refused, reset), throttling or a server error after
        # the client's own retries: the endpoint is down. A 4xx is an answer about this request.
        status = exc.status
        return status is None or status == 429 or status >= 500
    return False


def connection_errors() -> tuple[type[BaseException], ...]:
    """The errors that mean "the database or the broker could not be reached": a step or a
    tick that meets one is retried later with backoff instead of ending its chain."""
    found: list[type[BaseException]] = [OperationalError, InterfaceError]
    try:
        from kombu.exceptions import OperationalError as KombuOperationalError

        found.append(KombuOperationalError)
    except ImportError:  # pragma: no cover - kombu comes with Celery
        pass
    try:
        import redis.exceptions

        found += [redis.exceptions.ConnectionError, redis.exceptions.TimeoutError]
    except ImportError:  # the embedded mode runs without redis-py
        pass
    return tuple(found)


def is_connection_error(exc: BaseException) -> bool:
    """True for a lost or refused database or broker connection, raised as such or as the
    explicit cause (``raise ... from``) of what a stage raised."""
    seen = set()
    kinds = connection_errors()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kinds):
            return True
        seen.add(id(exc))
        exc = exc.__cause__
    return False


def describe(exc: BaseException) -> str:
    return f"{exc.__class__.__name__}: {exc}"
