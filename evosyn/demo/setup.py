"""The EvoSyn part of `make demo`: replayed endpoints (an authored cassette, see pack.py), the
HumanEval seed HumanEval/0 and one campaign run inline: the strategy search (a crashing
mutation recorded, the document's Figure 3 program kept), three synthesized problems (one
kept, one pruned for zero variance, one for identical solutions), and the kept problem measured
by a replayed panel. Idempotent."""

from __future__ import annotations

from evolution.models import Campaign, ModelEndpoint, Panel, PanelMember, Problem, ProblemSet
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_launch

from . import pack

CAMPAIGN_NAME = "Demo: EvoSyn evolved test selection"


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
    seed = Problem.objects.filter(origin_dataset="humaneval", origin_id=pack.SEED).first()
    if seed is None:
        from evolution.importers import import_seeds

        import_seeds(source="humaneval")
        seed = Problem.objects.get(origin_dataset="humaneval", origin_id=pack.SEED)
    seed_set, _ = ProblemSet.objects.get_or_create(
        name=pack.SEED_SET, defaults={"description": "Seed of the EvoSyn demo campaign."}
    )
    seed_set.problems.set([seed])
    return seed_set


def demo_panel() -> Panel:
    panel, _ = Panel.objects.get_or_create(
        name=pack.PANEL, defaults={"description": "measures the EvoSyn demo's kept problems"}
    )
    for model in pack.PANEL_MODELS:
        PanelMember.objects.get_or_create(
            panel=panel, endpoint=_replay(f"{model} (replayed)", model)
        )
    return panel


def demo_evosyn_campaign(*, created_by=None) -> Campaign:
    from evosyn.services import evosyn_campaign_create

    existing = Campaign.objects.filter(name=CAMPAIGN_NAME).order_by("-created_at").first()
    if existing and existing.state != CampaignState.FAILED:
        return existing
    return evosyn_campaign_create(
        name=CAMPAIGN_NAME,
        seed_set=demo_seed_set(),
        endpoint=_replay("demo-evosyn-teacher (replayed)", "evosyn-teacher"),
        settings=pack.DEMO_SETTINGS,
        panel=demo_panel(),
        created_by=created_by,
    )


def evosyn_demo(*, world=None, stdout=None, admin=None) -> Campaign:
    """The demo hook: build and run the EvoSyn demo campaign inline."""
    from evosyn.models import InstanceStatus
    from evosyn.services import evosyn_run_inline

    campaign = demo_evosyn_campaign(created_by=admin)
    if campaign.state == CampaignState.DRAFT:
        campaign = campaign_launch(campaign_id=campaign.pk)
    if campaign.state in (CampaignState.QUEUED, CampaignState.RUNNING):
        if stdout:
            stdout.write(f"Running '{campaign.name}' (replayed responses, live execution)…")
        campaign = evosyn_run_inline(campaign_id=campaign.pk)
    if stdout:
        kept = campaign.evosyn.instances.filter(status=InstanceStatus.KEPT).count()
        stdout.write(
            f"'{campaign.name}': {campaign.state}; {kept} synthesized problem(s) kept "
            f"(/evosyn/{campaign.pk}/)"
        )
    return campaign
