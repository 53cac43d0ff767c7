"""The FrontierSmith part of `make demo`: replayed mutator and solver endpoints (an authored
cassette, see pack.py), one closed-ended seed and one campaign round run inline: one
open-ended knapsack accepted, one proposal whose verifier never converges, one the coarse filter
rejects, one dropped at the final selection. Idempotent."""

from __future__ import annotations

from evolution.models import Campaign, ModelEndpoint, Problem, ProblemSet
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_launch

from . import pack

CAMPAIGN_NAME = "Demo: FrontierSmith open-ended problems"


def _replay(name: str, model: str) -> ModelEndpoint:
    endpoint, _ = ModelEndpoint.objects.update_or_create(
        name=name,
        defaults={
            "provider": "replay",
            "model": model,
            "cassette": str(pack.CASSETTE),
            "concurrency_limit": 4,
        },
    )
    return endpoint


def demo_seed_set() -> ProblemSet:
    dataset, origin_id = pack.SEED_ORIGIN
    seed, _ = Problem.objects.get_or_create(
        origin_dataset=dataset,
        origin_id=origin_id,
        defaults={"title": pack.SEED_TITLE, "statement": pack.SEED_STATEMENT, "harness": "stdio"},
    )
    seed_set, _ = ProblemSet.objects.get_or_create(
        name=pack.SEED_SET,
        defaults={"description": "The closed-ended seed of the FrontierSmith demo campaign."},
    )
    seed_set.problems.set([seed])
    return seed_set


def demo_frontier_campaign(*, created_by=None) -> Campaign:
    from frontiersmith.services import frontier_campaign_create

    existing = Campaign.objects.filter(name=CAMPAIGN_NAME).order_by("-created_at").first()
    if existing and existing.state != CampaignState.FAILED:
        return existing
    return frontier_campaign_create(
        name=CAMPAIGN_NAME,
        seed_set=demo_seed_set(),
        mutator_endpoint=_replay("demo-frontier-mutator (replayed)", "frontier-mutator"),
        solver_endpoint=_replay("demo-frontier-solver (replayed)", "frontier-solver"),
        settings=pack.DEMO_SETTINGS,
        created_by=created_by,
    )


def frontiersmith_demo(*, world=None, stdout=None, admin=None) -> Campaign:
    """The demo hook: build and run the FrontierSmith demo campaign inline."""
    from frontiersmith.models import CandidateDecision
    from frontiersmith.services import frontier_run_inline

    campaign = demo_frontier_campaign(created_by=admin)
    if campaign.state == CampaignState.DRAFT:
        campaign = campaign_launch(campaign_id=campaign.pk)
    if campaign.state in (CampaignState.QUEUED, CampaignState.RUNNING):
        if stdout:
            stdout.write(f"Running '{campaign.name}' (replayed responses, live execution)…")
        campaign = frontier_run_inline(campaign_id=campaign.pk)
    if stdout:
        accepted = campaign.frontier.candidates.filter(decision=CandidateDecision.ACCEPTED).count()
        stdout.write(
            f"'{campaign.name}': {campaign.state}; {accepted} open-ended problem(s) accepted "
            f"(/frontiersmith/{campaign.pk}/)"
        )
    return campaign
