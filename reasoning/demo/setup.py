"""The reasoning part of `make demo`: replayed endpoints for the three roles and three judges,
and one campaign of three runs over the 8 types x 10 difficulties, run inline. Idempotent."""

from __future__ import annotations

from evolution.models import Campaign, ModelEndpoint
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_launch

from . import pack

CAMPAIGN_NAME = "Demo: self-evolving reasoning benchmark"


def _replay(name: str, model: str) -> ModelEndpoint:
    endpoint, _ = ModelEndpoint.objects.update_or_create(
        name=name,
        defaults={
            "provider": "replay",
            "model": model,
            "cassette": str(pack.CASSETTE),
            "concurrency_limit": 8,
        },
    )
    return endpoint


def demo_reasoning_campaign(*, created_by=None) -> Campaign:
    from reasoning.services import reasoning_campaign_create

    existing = Campaign.objects.filter(name=CAMPAIGN_NAME).order_by("-created_at").first()
    if existing and existing.state != CampaignState.FAILED:
        return existing
    return reasoning_campaign_create(
        name=CAMPAIGN_NAME,
        generation_endpoint=_replay("demo-question-writer (replayed)", "question-writer"),
        answering_endpoint=_replay("demo-answerer (replayed)", "answerer"),
        judge_endpoints=[_replay(f"{name} (replayed)", name) for name in pack.JUDGES],
        settings=pack.DEMO_SETTINGS,
        created_by=created_by,
    )


def reasoning_demo(*, world=None, stdout=None, admin=None) -> Campaign:
    """The demo hook: build and run the reasoning demo campaign inline."""
    from reasoning.services import reasoning_run_inline

    campaign = demo_reasoning_campaign(created_by=admin)
    if campaign.state == CampaignState.DRAFT:
        campaign = campaign_launch(campaign_id=campaign.pk)
    if campaign.state in (CampaignState.QUEUED, CampaignState.RUNNING):
        if stdout:
            stdout.write(f"Running '{campaign.name}' (replayed responses)…")
        campaign = reasoning_run_inline(campaign_id=campaign.pk)
    if stdout:
        rc = campaign.reasoning
        ema = f"{rc.ema:.3f}" if rc.ema is not None else "–"
        stdout.write(
            f"'{campaign.name}': {campaign.state}; {rc.run_count} runs, "
            f"{rc.items.count()} items, overall EMA {ema} (/reasoning/{campaign.pk}/)"
        )
    return campaign
