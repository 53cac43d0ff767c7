"""BenchEvolver's services besides its stages: creating a campaign (one lineage per seed),
dropping seeds from a draft and advancing one lineage by one step."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from evolution.benchevolver.models import Lineage
from evolution.models import Campaign, ModelEndpoint, Panel, ProblemSet
from evolution.models.campaigns import CampaignKind
from evolution.services import campaigns as campaign_services
from evolution.streams import runner
from evolution.streams.runner import StepReport

from .engine.config import EvolutionSettings
from .stages.common import KIND_NAME


@transaction.atomic
def campaign_create(
    *,
    name: str,
    seed_set: ProblemSet,
    evolver: ModelEndpoint,
    panel: Panel,
    settings: dict | None = None,
    kind: str = CampaignKind.BENCHEVOLVER,
    seed_limit: int | None = None,
    role_endpoints: dict | None = None,
    created_by=None,
    **budget,
) -> Campaign:
    """Validate the algorithm settings (ValidationError names each bad key) and create the
    campaign with one lineage per seed, in draft. ``budget``: the campaign's
    ``budget_max_calls`` / ``_tokens`` / ``_cost``."""
    validated = campaign_services.campaign_settings_validate(
        EvolutionSettings, name=name, settings=settings
    )
    if not panel.members.exists():
        raise ValidationError({"panel": [f"panel {panel.name!r} has no target models"]})
    seeds = list(seed_set.problems.order_by("id"))
    if seed_limit:
        seeds = seeds[:seed_limit]
    if not seeds:
        raise ValidationError({"seed_set": [f"seed set {seed_set.name!r} has no problems"]})
    campaign = campaign_services.campaign_record_create(
        kind=kind,
        name=name,
        validated=validated,
        endpoints=[
            evolver,
            *(m.endpoint for m in panel.members.select_related("endpoint")),
            *campaign_services.role_endpoints_resolve(role_endpoints),
        ],
        seed_set=seed_set,
        seed_limit=seed_limit,
        evolver=evolver,
        panel=panel,
        role_endpoints=role_endpoints or {},
        created_by=created_by,
        **budget,
    )
    Lineage.objects.bulk_create(
        [
            Lineage(campaign=campaign, seed=seed, parent=seed, position=i)
            for i, seed in enumerate(seeds)
        ]
    )
    return campaign


def seeds_drop(campaign: Campaign, problem_ids: list[int]) -> None:
    """A draft campaign's seeds left out (by a curator editing a re-evolution): their
    lineages go."""
    Lineage.objects.filter(campaign=campaign, seed_id__in=list(problem_ids)).delete()


def lineage_advance(
    *, lineage_id: int, ticket: str | None = None, queue: str | None = None
) -> StepReport:
    """Advance one lineage by one action through the shared runner (claim, next action, stage,
    release, failure policy: evolution.streams.runner). ``queue`` is the queue this worker
    serves (None: any, and nothing is scheduled); ``ticket`` None skips the ticket check."""
    return runner.advance(
        kind=KIND_NAME,
        stream_id=lineage_id,
        ticket=ticket,
        queue=queue,
        schedule=queue is not None,
    )
