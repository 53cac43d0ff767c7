"""The gateway's typed errors. Every one is an ``LLMError`` so callers can catch one class."""

from __future__ import annotations


class LLMError(Exception):
    """A model exchange did not produce a usable answer.

    ``call_id`` is the pk of the LLMCall row that records the failure, when one was written
    (configuration errors found before anything is sent have none).
    """

    def __init__(self, message: str, *, call_id: int | None = None):
        super().__init__(message)
        self.call_id = call_id


class LLMTransportError(LLMError):
    """The endpoint did not answer usably after the bounded retries.

    ``status`` is the last HTTP status seen (None when the last try got no HTTP response:
    timeout, dropped connection); ``tries`` counts requests sent.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        tries: int = 0,
        call_id: int | None = None,
    ):
        super().__init__(message, call_id=call_id)
        self.status = status
        self.tries = tries


class BudgetExhausted(LLMError):
    """The campaign's call, token or cost budget is already reached; nothing was sent."""

    def __init__(self, reason: str, *, campaign_id: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.campaign_id = campaign_id


class ReplayMissError(LLMError):
    """The replay cassette holds no response for this request (recorded as a failed call)."""


class ParseError(LLMError):
    """A model's answer does not contain the structure the caller asked for."""
