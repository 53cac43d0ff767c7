"""The reasoning part of `make demo`: replayed endpoints for the three roles and three judges,
and one campaign of three runs over the 8 types x 10 difficulties, run inline. Idempotent."""

from __future__ import annotations

from evolution.demo.kind_setup import (
    demo_campaign_get_or_create,
    demo_campaign_run,
    replayer,
)
from evolution.models import Campaign

from . import pack

CAMPAIGN_NAME = "Demo: self-evolving reasoning benchmark"
replayed = replayer(pack.CASSETTE, concurrency_limit=8)


def demo_reasoning_campaign(*, created_by=None) -> Campaign:
    from reasoning.services import reasoning_campaign_create

    return demo_campaign_get_or_create(
        CAMPAIGN_NAME,
        lambda: reasoning_campaign_create(
            name=CAMPAIGN_NAME,
            generation_endpoint=replayed("demo-question-writer (replayed)", "question-writer"),
            answering_endpoint=replayed("demo-answerer (replayed)", "answerer"),
            judge_endpoints=[replayed(f"{name} (replayed)", name) for name in pack.JUDGES],
            settings=pack.DEMO_SETTINGS,
            created_by=created_by,
        ),
    )


def reasoning_demo(*, world=None, stdout=None, admin=None) -> Campaign:
    """The demo hook: build and run the reasoning demo campaign inline."""
    campaign = demo_campaign_run(demo_reasoning_campaign(created_by=admin), stdout=stdout)
    if stdout:
        rc = campaign.reasoning
        ema = f"{rc.ema:.3f}" if rc.ema is not None else "–"
        stdout.write(
            f"'{campaign.name}': {campaign.state}; {rc.run_count} runs, "
            f"{rc.items.count()} items, overall EMA {ema} (/reasoning/{campaign.pk}/)"
        )
    return campaign
