"""Panels on the loopback model server, and a responder that answers panel attempts by model.

A panel attempt is a "solver" request whose replay key starts with ``measure;``; the answer is
picked by the statement it asks about (a marker found in the prompt) and the model asked, so a
test decides exactly how many attempts pass."""

from __future__ import annotations

import pytest

from evolution.models import ModelEndpoint, Panel, PanelMember
from tests.support.fake_openai import FakeOpenAI, Fault


def panel_endpoint(server: FakeOpenAI, name: str, **fields) -> ModelEndpoint:
    defaults = dict(
        provider="openai",
        base_url=server.base_url,
        model=name,
        concurrency_limit=4,
        timeout_s=30,
        max_retries=0,
    )
    defaults.update(fields)
    return ModelEndpoint.objects.update_or_create(name=name, defaults=defaults)[0]


def make_panel(server: FakeOpenAI, names: list[str], *, name: str = "measurement panel") -> Panel:
    panel = Panel.objects.create(name=name)
    for member in names:
        PanelMember.objects.create(panel=panel, endpoint=panel_endpoint(server, member))
    return panel


class PanelAnswers:
    """Answers ``measure;`` solver requests from ``table``: {statement marker: {model: answer}}
    (an answer is text or a ``Fault``); anything else goes to ``fallback``."""

    def __init__(self, table: dict[str, dict[str, object]], fallback=None):
        self.table = table
        self.fallback = fallback
        self.asked: list[tuple[str, str]] = []

    def __call__(self, body, headers):
        key = headers.get("X-BenchForge-Key", headers.get("x-benchforge-key", ""))
        if not key.startswith("measure;"):
            if self.fallback is None:
                return Fault.http_status(404, '{"error": "no scripted answer"}')
            return self.fallback(body, headers)
        prompt = "\n".join(m["content"] for m in body["messages"])
        self.asked.append((body["model"], key))
        for marker, by_model in self.table.items():
            if marker in prompt:
                return by_model.get(body["model"], "no code here")
        return "I cannot solve this."


@pytest.fixture
def fake_server():
    with FakeOpenAI() as server:
        yield server
