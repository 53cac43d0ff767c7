"""Shared pieces of the living-benchmark tests: a loopback panel of two models on the crafted
release (E-OK, E-OVERRIDE, S2) and the endpoints pointing at it."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from evolution.models import ModelEndpoint

from .builders import SUM_CODE, WRONG_CODE


def fenced(code: str) -> str:
    return f"Here you go.\n\n```python\n{code}```\n"


class Panel:
    """``weak`` solves E-OK and E-OVERRIDE on samples 0-2 of 4 (pass@1 0.75, exactly the gate's
    bound: not saturated); ``strong`` solves both every time. Neither solves S2."""

    def __call__(self, body, headers):
        prompt = body["messages"][-1]["content"]
        key = headers.get("X-BenchForge-Key") or headers.get("x-benchforge-key", "")
        sample = int(key.rsplit("sample=", 1)[1])
        if "Task S2." in prompt:
            return fenced(WRONG_CODE)
        if body["model"] == "strong" or sample < 3:
            return fenced(SUM_CODE)
        return fenced(WRONG_CODE)


def endpoint(server, name: str) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name=name,
        provider="openai",
        base_url=server.base_url,
        model=name,
        concurrency_limit=4,
        timeout_s=30,
        max_retries=0,
        release_date=(timezone.now() - timedelta(days=1)).date(),
    )
