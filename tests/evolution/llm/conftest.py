"""Fixtures for the gateway tests: a loopback OpenAI-compatible server and an endpoint on it."""

from __future__ import annotations

import pytest

from evolution.llm import limiter
from tests.factories import ModelEndpointFactory
from tests.support.fake_openai import FakeOpenAI


@pytest.fixture(scope="session", autouse=True)
def _clean_limiter_keys(django_db_setup):
    """Endpoint ids restart with each fresh test database: drop a previous run's slots."""
    from django.conf import settings

    if settings.LLM_LIMITER == "redis":
        client = limiter._redis()
        for key in client.scan_iter(match=f"{limiter._namespace()}:*"):
            client.delete(key)


@pytest.fixture(autouse=True)
def _fast_backoff(settings):
    # Retries are exercised for real; only the waiting between them is shortened.
    settings.LLM_BACKOFF_BASE_S = 0.001
    settings.LLM_BACKOFF_MAX_S = 0.01
    settings.LLM_RECORD = False


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def endpoint(db, fake):
    return ModelEndpointFactory(
        base_url=fake.base_url, model="m1", max_retries=2, timeout_s=5, concurrency_limit=4
    )
