"""What every kind's part of `make demo` does the same way: replayed endpoints and panels read
from the kind's authored cassette, a seed set of HumanEval problems (imported when missing),
the campaign reused when an earlier start made it, and the campaign launched and run inline.
Each kind's ``<method>/demo/setup.py`` says only what is its own: its seeds, its endpoints'
roles, its settings and the line it prints."""

from __future__ import annotations

from collections.abc import Callable

from evolution.models import Campaign, ModelEndpoint, Panel, PanelMember, Problem, ProblemSet
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_launch
from evolution.streams import runner


def replay_endpoint(name: str, model: str, *, cassette, concurrency_limit: int = 4):
    """The endpoint ``name`` answering as ``model`` from the cassette file ``cassette``."""
    endpoint, _ = ModelEndpoint.objects.update_or_create(
        name=name,
        defaults={
            "provider": "replay",
            "model": model,
            "cassette": str(cassette),
            "concurrency_limit": concurrency_limit,
        },
    )
    return endpoint


def replayer(cassette, *, concurrency_limit: int = 4):
    """``replayed(name, model)``: ``replay_endpoint`` on one kind's cassette."""

    def replayed(name: str, model: str):
        return replay_endpoint(name, model, cassette=cassette, concurrency_limit=concurrency_limit)

    return replayed


def replay_panel(name: str, models, *, cassette, description: str) -> Panel:
    """The panel ``name`` of one replayed endpoint per model ("<model> (replayed)")."""
    panel, _ = Panel.objects.get_or_create(name=name, defaults={"description": description})
    for model in models:
        PanelMember.objects.get_or_create(
            panel=panel, endpoint=replay_endpoint(f"{model} (replayed)", model, cassette=cassette)
        )
    return panel


def humaneval_seed_set(name: str, origin_ids, *, description: str) -> ProblemSet:
    """The seed set ``name`` holding the HumanEval problems ``origin_ids`` (the HumanEval
    seeds are imported first when any is missing)."""
    seeds = list(Problem.objects.filter(origin_dataset="humaneval", origin_id__in=origin_ids))
    if len(seeds) < len(origin_ids):
        from evolution.importers import import_seeds

        import_seeds(source="humaneval")
        seeds = list(Problem.objects.filter(origin_dataset="humaneval", origin_id__in=origin_ids))
    seed_set, _ = ProblemSet.objects.get_or_create(name=name, defaults={"description": description})
    seed_set.problems.set(seeds)
    return seed_set


def demo_campaign_get_or_create(name: str, create: Callable[[], Campaign]) -> Campaign:
    """The demo campaign ``name`` an earlier start made (unless it failed), else ``create()``:
    the demo is idempotent."""
    existing = Campaign.objects.filter(name=name).order_by("-created_at").first()
    if existing and existing.state != CampaignState.FAILED:
        return existing
    return create()


def demo_campaign_run(campaign: Campaign, *, stdout=None, how: str = "replayed responses"):
    """Launch a draft demo campaign and run it in this process until it finishes (a finished
    one is left as it is); returns the campaign."""
    if campaign.state == CampaignState.DRAFT:
        campaign = campaign_launch(campaign_id=campaign.pk)
    if campaign.state in (CampaignState.QUEUED, CampaignState.RUNNING):
        if stdout:
            stdout.write(f"Running '{campaign.name}' ({how})…")
        campaign = runner.run_inline(campaign_id=campaign.pk)
    return campaign
