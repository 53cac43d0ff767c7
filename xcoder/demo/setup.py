"""The X-Coder part of `make demo`: replayed generator and solver endpoints (an authored
cassette, see pack.py), three HumanEval seeds, and one campaign of three tasks run inline:
one Codeforces-style and one LeetCode-style task accepted by the vote, one statement rejected
by the hint-leakage gate. Idempotent."""

from __future__ import annotations

from evolution.models import Campaign, ModelEndpoint, Panel, PanelMember, Problem, ProblemSet
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_launch

from . import pack

CAMPAIGN_NAME = "Demo: X-Coder feature-tree synthesis"
SEED_SET = "xcoder-demo-seeds"


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
    seeds = list(Problem.objects.filter(origin_dataset="humaneval", origin_id__in=pack.SEEDS))
    if len(seeds) < len(pack.SEEDS):
        from evolution.importers import import_seeds

        import_seeds(source="humaneval")
        seeds = list(Problem.objects.filter(origin_dataset="humaneval", origin_id__in=pack.SEEDS))
    seed_set, _ = ProblemSet.objects.get_or_create(
        name=SEED_SET, defaults={"description": "Seeds of the X-Coder demo campaign."}
    )
    seed_set.problems.set(seeds)
    return seed_set


def demo_panel() -> Panel:
    """The replayed panel that measures the demo's accepted tasks."""
    panel, _ = Panel.objects.get_or_create(
        name=pack.PANEL, defaults={"description": "measures the X-Coder demo's accepted tasks"}
    )
    for model in pack.PANEL_MODELS:
        PanelMember.objects.get_or_create(
            panel=panel, endpoint=_replay(f"{model} (replayed)", model)
        )
    return panel


def demo_xcoder_campaign(*, created_by=None) -> Campaign:
    from xcoder.services import xcoder_campaign_create

    existing = Campaign.objects.filter(name=CAMPAIGN_NAME).order_by("-created_at").first()
    if existing and existing.state != CampaignState.FAILED:
        return existing
    return xcoder_campaign_create(
        name=CAMPAIGN_NAME,
        seed_set=demo_seed_set(),
        generator_endpoint=_replay("demo-xcoder-writer (replayed)", "xcoder-writer"),
        solver_endpoints=[_replay(name, name.split(" ")[0]) for name in pack.SOLVERS],
        settings=pack.DEMO_SETTINGS,
        created_by=created_by,
        panel=demo_panel(),
    )


def xcoder_demo(*, world=None, stdout=None, admin=None) -> Campaign:
    """The demo hook: build and run the X-Coder demo campaign inline."""
    from xcoder.services import xcoder_run_inline

    campaign = demo_xcoder_campaign(created_by=admin)
    if campaign.state == CampaignState.DRAFT:
        campaign = campaign_launch(campaign_id=campaign.pk)
    if campaign.state in (CampaignState.QUEUED, CampaignState.RUNNING):
        if stdout:
            stdout.write(f"Running '{campaign.name}' (replayed responses)…")
        campaign = xcoder_run_inline(campaign_id=campaign.pk)
    if stdout:
        tasks = campaign.xcoder.tasks.all()
        accepted = sum(t.status == "accepted" for t in tasks)
        stdout.write(
            f"'{campaign.name}': {campaign.state}; {accepted} of {len(tasks)} tasks accepted "
            f"(/xcoder/{campaign.pk}/)"
        )
    return campaign
