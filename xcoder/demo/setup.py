"""The X-Coder part of `make demo`: replayed generator and solver endpoints (an authored
cassette, see pack.py), three HumanEval seeds, and one campaign of three tasks run inline:
one Codeforces-style and one LeetCode-style task accepted by the vote, one statement rejected
by the hint-leakage gate. Idempotent."""

from __future__ import annotations

from evolution.demo.kind_setup import (
    demo_campaign_get_or_create,
    demo_campaign_run,
    humaneval_seed_set,
    replay_panel,
    replayer,
)
from evolution.models import Campaign

from . import pack

CAMPAIGN_NAME = "Demo: X-Coder feature-tree synthesis"
replayed = replayer(pack.CASSETTE)
SEED_SET = "xcoder-demo-seeds"


def demo_xcoder_campaign(*, created_by=None) -> Campaign:
    from xcoder.services import xcoder_campaign_create

    return demo_campaign_get_or_create(
        CAMPAIGN_NAME,
        lambda: xcoder_campaign_create(
            name=CAMPAIGN_NAME,
            seed_set=humaneval_seed_set(
                SEED_SET, pack.SEEDS, description="Seeds of the X-Coder demo campaign."
            ),
            generator_endpoint=replayed("demo-xcoder-writer (replayed)", "xcoder-writer"),
            solver_endpoints=[replayed(name, name.split(" ")[0]) for name in pack.SOLVERS],
            settings=pack.DEMO_SETTINGS,
            created_by=created_by,
            # The replayed panel that measures the demo's accepted tasks.
            panel=replay_panel(
                pack.PANEL,
                pack.PANEL_MODELS,
                cassette=pack.CASSETTE,
                description="measures the X-Coder demo's accepted tasks",
            ),
        ),
    )


def xcoder_demo(*, world=None, stdout=None, admin=None) -> Campaign:
    """The demo hook: build and run the X-Coder demo campaign inline."""
    campaign = demo_campaign_run(demo_xcoder_campaign(created_by=admin), stdout=stdout)
    if stdout:
        tasks = campaign.xcoder.tasks.all()
        accepted = sum(t.status == "accepted" for t in tasks)
        stdout.write(
            f"'{campaign.name}': {campaign.state}; {accepted} of {len(tasks)} tasks accepted "
            f"(/xcoder/{campaign.pk}/)"
        )
    return campaign
