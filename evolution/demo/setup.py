"""What `make demo` builds: seeds, replay endpoints, a panel, users, and the demo campaigns.
Idempotent: running it again reuses what exists."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import transaction

from accounts.services import user_create
from evolution.benchevolver.demo import pack
from evolution.importers import import_seeds
from evolution.models import Campaign, ModelEndpoint, Panel, PanelMember, Problem, ProblemSet

from .kind_setup import demo_campaign_get_or_create

DEMO_SET = "demo-pack"
COMPLETED_NAME = "Demo: evolve the demo pack"
RESUMABLE_NAME = "Demo: resumable campaign (pause / resume me)"
USERS = (
    ("demo-admin", "admin"),
    ("demo-curator", "curator"),
    ("demo-reviewer", "reviewer"),
    ("demo-reviewer-2", "reviewer"),
)


@dataclass
class DemoWorld:
    seed_set: ProblemSet
    evolver: ModelEndpoint
    panel: Panel
    logins: list[tuple[str, str, str]] = field(default_factory=list)
    # BenchEvolver's demo campaign once it completed (the demo command sets it): what the
    # apps' later steps (the release) take their evolved problems from.
    completed: Campaign | None = None


def demo_users() -> list[tuple[str, str, str]]:
    """(role, username, password): fresh random passwords on every start, printed to the console."""
    logins = []
    for username, role in USERS:
        password = secrets.token_urlsafe(9)
        user_create(username=username, password=password, role=role)
        logins.append((role, username, password))
    return logins


@transaction.atomic
def demo_world() -> DemoWorld:
    import_seeds(source="humaneval")
    import_seeds(source="jsonl", path=str(pack.SEEDS_FILE), set_name=DEMO_SET)
    seed_set = ProblemSet.objects.get(name=DEMO_SET)
    seed_set.description = (
        "Six seeds for the offline demo: three stdin/stdout problems and three HumanEval problems."
    )
    seed_set.source = "demo"
    seed_set.save()
    seed_set.problems.add(
        *Problem.objects.filter(origin_dataset="humaneval", origin_id__in=pack.HUMANEVAL_SEEDS)
    )

    def replay(name: str, model: str, price_in: str, price_out: str) -> ModelEndpoint:
        # Illustrative per-1k-token prices, so the demo's cost accounting has something to count.
        endpoint, _ = ModelEndpoint.objects.update_or_create(
            name=name,
            defaults={
                "provider": "replay",
                "model": model,
                "cassette": "demo.jsonl",
                "concurrency_limit": 8,
                "price_in_per_1k": Decimal(price_in),
                "price_out_per_1k": Decimal(price_out),
            },
        )
        return endpoint

    evolver = replay("demo-evolver (replayed)", "evolver", "0.003", "0.015")
    panel, _ = Panel.objects.get_or_create(
        name="demo-panel", defaults={"description": "two replayed target models"}
    )
    for model in pack.SOLVER_MODELS:
        PanelMember.objects.get_or_create(
            panel=panel,
            endpoint=replay(f"{model} (replayed)", model, "0.0005", "0.0015"),
            defaults={"attempts": 4},
        )
    return DemoWorld(seed_set=seed_set, evolver=evolver, panel=panel)


def demo_campaign(world: DemoWorld, name: str, created_by=None) -> Campaign:
    from evolution.benchevolver.services import campaign_create

    return demo_campaign_get_or_create(
        name,
        lambda: campaign_create(
            name=name,
            seed_set=world.seed_set,
            evolver=world.evolver,
            panel=world.panel,
            settings=pack.DEMO_SETTINGS,
            created_by=created_by,
        ),
    )
