"""What an endpoint is sent when a campaign calls it: its own sampling parameters, with the
campaign's Table 5 values where the endpoint sets none, and the request timeout in force.

One function decides, and the campaign page shows its result, so the value shown is the
value sent.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass


@dataclass(frozen=True)
class Sampling:
    temperature: float | None  # None: no temperature is sent
    temperature_source: str  # "endpoint" | "campaign" | "omitted"
    top_p: float | None
    max_tokens: int | None
    reasoning_effort: str
    extra_params: dict
    timeout_s: float
    timeout_source: str  # "endpoint" | "campaign"

    def describe(self) -> str:
        parts = [
            "temperature not sent"
            if self.temperature is None
            else f"temperature {self.temperature:g} ({self.temperature_source})"
        ]
        if self.top_p is not None:
            parts.append(f"top_p {self.top_p:g}")
        if self.max_tokens is not None:
            parts.append(f"max_tokens {self.max_tokens}")
        if self.reasoning_effort:
            parts.append(f"reasoning_effort {self.reasoning_effort}")
        if self.extra_params:
            parts.append("extra " + ", ".join(sorted(self.extra_params)))
        parts.append(f"timeout {self.timeout_s:g} s ({self.timeout_source})")
        return " · ".join(parts)


def resolve_sampling(endpoint, *, temperature: float, timeout: float) -> Sampling:
    """``temperature`` and ``timeout`` are the campaign's settings. The endpoint's temperature
    wins when set, unless it omits temperature altogether; the campaign's ``timeout`` caps
    the endpoint's own ``timeout_s`` (the shorter one is used)."""
    if endpoint.omit_temperature:
        temp, temp_source = None, "omitted"
    elif endpoint.temperature is not None:
        temp, temp_source = endpoint.temperature, "endpoint"
    else:
        temp, temp_source = temperature, "campaign"
    own = float(endpoint.timeout_s)
    if own <= timeout:
        timeout_s, timeout_source = own, "endpoint"
    else:
        timeout_s, timeout_source = float(timeout), "campaign"
    return Sampling(
        temperature=temp,
        temperature_source=temp_source,
        top_p=endpoint.top_p,
        max_tokens=endpoint.max_tokens,
        reasoning_effort=endpoint.reasoning_effort or "",
        extra_params=dict(endpoint.extra_params or {}),
        timeout_s=timeout_s,
        timeout_source=timeout_source,
    )


def endpoint_for_campaign(endpoint, *, temperature: float, timeout: float):
    """A copy of ``endpoint`` (same pk, never saved) carrying the resolved temperature and
    timeout, for the one client to send."""
    sampling = resolve_sampling(endpoint, temperature=temperature, timeout=timeout)
    resolved = copy.copy(endpoint)
    resolved.temperature = sampling.temperature
    resolved.omit_temperature = sampling.temperature is None
    resolved.timeout_s = sampling.timeout_s
    return resolved
