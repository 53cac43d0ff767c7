"""Reasoning campaigns run to the end against the loopback server, for the review and release
tests: every item is generated, answered and judged live. Answers and judge rationales carry
distinctive markers so blinding and public-page tests can look for them."""

from __future__ import annotations

import json

from evolution.streams.runner import run_inline
from reasoning.models import ReasoningCampaign
from tests.support.fake_openai import FakeOpenAI

from .helpers import World, make_campaign


class MarkedWorld(World):
    """Like ``World``, but the n-th answer is ``ANSWER-SECRET-<n>`` and every judge rationale
    is ``rationale-SECRET-<n>``: strings that must never reach a reviewer or the public."""

    def __init__(self):
        super().__init__()
        self.answered = 0
        self.judged = 0

    def __call__(self, body, headers):
        role = headers.get("x-benchforge-role", "")
        if role == "answering":
            self.answered += 1
            return f"Step by step... Final answer: ANSWER-SECRET-{self.answered}"
        if role == "evaluation":
            self.keys.append((role, headers.get("x-benchforge-key", "")))
            self.judged += 1
            value = self.verdicts.pop(0) if self.verdicts else True
            if value is None:
                return "It looks right to me."
            return json.dumps(
                {
                    "score": "correct" if value else "incorrect",
                    "rationale": f"rationale-SECRET-{self.judged}",
                }
            )
        return super().__call__(body, headers)


def judged_reasoning(
    server: FakeOpenAI,
    *,
    verdicts: list[bool | None],
    types: tuple[str, ...] = ("logical_deduction",),
    difficulty_end: int = 2,
    runs: int = 2,
    created_by=None,
) -> ReasoningCampaign:
    """A finished campaign: ``runs`` runs over ``types`` x difficulties 1..``difficulty_end``,
    one question per cell, judged by one judge giving ``verdicts`` in order (None: a parse
    failure, scored 0)."""
    world = MarkedWorld()
    world.verdicts = list(verdicts)
    server.responder = world
    campaign = make_campaign(
        server,
        reasoning_types=[{"name": t, "description": f"questions of type {t}"} for t in types],
        difficulty_end=difficulty_end,
        runs=runs,
    )
    if created_by is not None:
        type(campaign).objects.filter(pk=campaign.pk).update(created_by=created_by)
    campaign = run_inline(campaign_id=campaign.pk)
    return ReasoningCampaign.objects.select_related("campaign").get(pk=campaign.pk)
