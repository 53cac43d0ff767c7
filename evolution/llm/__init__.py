"""The model gateway: one client for OpenAI-compatible chat completions.

    from evolution.llm import LLMClient, CallContext
    result = LLMClient(endpoint, CallContext(campaign_id=c.pk)).chat(messages, role="solver")

Providers: ``openai`` (HTTP, with retries and a per-endpoint concurrency limit) and ``replay``
(cassette files). Every call is logged as an LLMCall and charged to its campaign.
"""

from .client import CallContext, ChatResult, LLMClient
from .errors import BudgetExhausted, LLMError, LLMTransportError, ParseError, ReplayMissError
from .parsing import extract_code, extract_json, mark_unparsable

__all__ = [
    "BudgetExhausted",
    "CallContext",
    "ChatResult",
    "LLMClient",
    "LLMError",
    "LLMTransportError",
    "ParseError",
    "ReplayMissError",
    "extract_code",
    "extract_json",
    "mark_unparsable",
]
