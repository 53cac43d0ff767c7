"""Which failures are the infrastructure's and which are an item's.

Infrastructure failures (the sandbox itself, the database, a model endpoint that stayed
unreachable after the client's retries) are never blamed on a unit: after the retry limit the
campaign pauses with the reason, and an admin resumes it once the outage is over. Every other
exception is the item's: after the retry limit the kind gives up on that item.
"""

from __future__ import annotations

from django.db import DatabaseError, InterfaceError

from evolution.llm.errors import LLMTransportError
from evolution.sandbox.types import SandboxError


class SandboxFailure(SandboxError):
    """The sandbox itself failed (verdict SE) while a stage ran programs: never blamed on a
    program; the step is retried, and the campaign pauses if it keeps failing."""


class UndeclaredTransition(Exception):
    """A unit was asked to move along an edge its kind does not declare."""


def is_infrastructure(exc: BaseException) -> bool:
    if isinstance(exc, SandboxError | DatabaseError | InterfaceError):
        return True
    if isinstance(exc, LLMTransportError):
        # No HTTP answer at all (time-out, refused, reset), throttling or a server error after
        # the client's own retries: the endpoint is down. A 4xx is an answer about this request.
        status = exc.status
        return status is None or status == 429 or status >= 500
    return False


def describe(exc: BaseException) -> str:
    return f"{exc.__class__.__name__}: {exc}"
