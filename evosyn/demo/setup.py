"""The EvoSyn part of `make demo`: replayed endpoints (an authored cassette, see pack.py), the
HumanEval seed HumanEval/0 and one campaign run inline: the strategy search (a crashing
mutation recorded, the document's Figure 3 program kept), three synthesized problems (one
kept, one pruned for zero variance, one for identical solutions), and the kept problem measured
by a replayed panel. Idempotent."""

from __future__ import annotations

from evolution.demo.kind_setup import (
    demo_campaign_get_or_create,
    demo_campaign_run,
    humaneval_seed_set,
    replay_endpoint,
    replay_panel,
)
from evolution.models import Campaign

from . import pack

CAMPAIGN_NAME = "Demo: EvoSyn evolved test selection"


def demo_evosyn_campaign(*, created_by=None) -> Campaign:
    from evosyn.services import evosyn_campaign_create

    return demo_campaign_get_or_create(
        CAMPAIGN_NAME,
        lambda: evosyn_campaign_create(
            name=CAMPAIGN_NAME,
            seed_set=humaneval_seed_set(
                pack.SEED_SET, [pack.SEED], description="Seed of the EvoSyn demo campaign."
            ),
            endpoint=replay_endpoint(
                "demo-evosyn-teacher (replayed)", "evosyn-teacher", cassette=pack.CASSETTE
            ),
            settings=pack.DEMO_SETTINGS,
            panel=replay_panel(
                pack.PANEL,
                pack.PANEL_MODELS,
                cassette=pack.CASSETTE,
                description="measures the EvoSyn demo's kept problems",
            ),
            created_by=created_by,
        ),
    )


def evosyn_demo(*, world=None, stdout=None, admin=None) -> Campaign:
    """The demo hook: build and run the EvoSyn demo campaign inline."""
    from evosyn.models import InstanceStatus

    campaign = demo_campaign_run(
        demo_evosyn_campaign(created_by=admin),
        stdout=stdout,
        how="replayed responses, live execution",
    )
    if stdout:
        kept = campaign.evosyn.instances.filter(status=InstanceStatus.KEPT).count()
        stdout.write(
            f"'{campaign.name}': {campaign.state}; {kept} synthesized problem(s) kept "
            f"(/evosyn/{campaign.pk}/)"
        )
    return campaign
