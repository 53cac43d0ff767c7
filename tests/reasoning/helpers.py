"""Reasoning campaigns against the loopback OpenAI-compatible server: every model answer
travels over real HTTP; novelty checks, judging, EMAs and reports are live."""

from __future__ import annotations

import json
import random
import re

import pytest

from evolution.models import ModelEndpoint
from evolution.services.campaigns import campaign_launch
from reasoning.services import reasoning_campaign_create
from tests.support.fake_openai import FakeOpenAI
from tests.support.words import WORDS


def fresh_question(n: int) -> str:
    """A question lexically unrelated to the others (random words, seeded by ``n``)."""
    rng = random.Random(n)
    return "Consider the " + " ".join(rng.sample(WORDS, 14)) + f" puzzle number {n}. What is it?"


def verdict(correct: bool, why: str = "checked") -> str:
    return json.dumps({"score": "correct" if correct else "incorrect", "rationale": why})


class World:
    """Answers by role: fresh questions, a fixed answer, and judge verdicts from a queue of
    booleans (``None`` answers in prose: a parse failure)."""

    def __init__(self):
        self.generated = 0
        self.verdicts: list[bool | None] = []
        self.keys: list[tuple[str, str]] = []

    def __call__(self, body, headers):
        role = headers.get("x-benchforge-role", "")
        self.keys.append((role, headers.get("x-benchforge-key", "")))
        if role == "generation":
            self.generated += 1
            return fresh_question(self.generated)
        if role == "answering":
            return "Step by step... Final answer: 42"
        if role == "quality":
            return json.dumps({"verdict": "accept", "reason": "fine"})
        if role == "evaluation":
            value = self.verdicts.pop(0) if self.verdicts else True
            if value is None:
                return "The answer looks right to me."
            return verdict(value)
        return "ok"


@pytest.fixture
def fake_server():
    with FakeOpenAI() as server:
        yield server


def endpoint(server: FakeOpenAI, name: str) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name=name,
        provider="openai",
        base_url=server.base_url,
        model=name,
        concurrency_limit=4,
        timeout_s=30,
        max_retries=1,
    )


def make_campaign(
    server: FakeOpenAI, *, judges: int = 1, launch: bool = True, series: str = "", **settings
):
    """A campaign on loopback endpoints; ``series``: the series it continues (empty: a new
    one)."""
    extra = {"series": series} if series else {}
    campaign = reasoning_campaign_create(
        **extra,
        name=f"reasoning-{random.random():.6f}",
        generation_endpoint=endpoint(server, f"gen-{server.port}-{random.random():.6f}"),
        answering_endpoint=endpoint(server, f"ans-{server.port}-{random.random():.6f}"),
        judge_endpoints=[
            endpoint(server, f"judge{i}-{server.port}-{random.random():.6f}") for i in range(judges)
        ],
        settings=settings,
    )
    if launch:
        campaign = campaign_launch(campaign_id=campaign.pk)
    return campaign


def one_type(name: str = "logical_deduction") -> list[dict]:
    return [{"name": name, "description": "Formal logic, syllogisms, puzzles"}]


def key_cell(key: str) -> str:
    """``run=1;d=2;type=t;q=0`` out of a replay key."""
    return re.sub(r";(attempt|judge)=\d+|;role=\w+|^reasoning;", "", key)
