"""FrontierSmith's services besides its stages (``frontiersmith/stages/``): creating a campaign,
advancing it one step, running it in this process."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from evolution.models import Campaign, ModelEndpoint, ProblemSet
from evolution.models.campaigns import CampaignKind
from evolution.services import campaigns as campaign_services

from . import calibration
from .config import FrontierSettings
from .models import FrontierCampaign
from .stages.common import METHOD


@transaction.atomic
def frontier_campaign_create(
    *,
    name: str,
    seed_set: ProblemSet,
    mutator_endpoint: ModelEndpoint,
    solver_endpoint: ModelEndpoint,
    settings: dict | None = None,
    seed_limit: int | None = None,
    calibration_closed: ProblemSet | None = None,
    calibration_open: ProblemSet | None = None,
    created_by=None,
    **budget,
) -> Campaign:
    """Validate the settings (ValidationError names each bad key) and create a draft campaign
    of kind "frontiersmith" with its own seed pool (a copy of ``seed_set``'s first
    ``seed_limit`` problems, grown by accepted problems) and output set. ``budget``: the
    campaign's ``budget_max_calls`` / ``_tokens`` / ``_cost``."""
    validated = campaign_services.campaign_settings_validate(
        FrontierSettings, name=name, settings=settings
    )
    seeds = list(seed_set.problems.order_by("id"))
    if seed_limit:
        seeds = seeds[:seed_limit]
    if not seeds:
        raise ValidationError({"seed_set": [f"seed set {seed_set.name!r} has no problems"]})
    if validated.bundled_calibration:
        calibration_closed = calibration_closed or calibration.bundled_set("closed")
        calibration_open = calibration_open or calibration.bundled_set("open")
    campaign = campaign_services.campaign_record_create(
        kind=CampaignKind.FRONTIERSMITH,
        name=name,
        validated=validated,
        endpoints=[mutator_endpoint, solver_endpoint],
        seed_set=seed_set,
        seed_limit=seed_limit,
        role_endpoints={"mutator": mutator_endpoint.pk, "solver": solver_endpoint.pk},
        created_by=created_by,
        **budget,
    )
    pool = ProblemSet.objects.create(
        name=f"frontiersmith-{campaign.pk}-pool",
        description=f"Seed pool of FrontierSmith campaign {campaign.name!r}: its seeds and "
        "every accepted problem, fed back each round.",
        source=METHOD,
    )
    pool.problems.set(seeds)
    output = ProblemSet.objects.create(
        name=f"frontiersmith-{campaign.pk}-accepted",
        description=f"Open-ended problems accepted by FrontierSmith campaign {campaign.name!r}.",
        source=METHOD,
    )
    FrontierCampaign.objects.create(
        campaign=campaign,
        mutator_endpoint=mutator_endpoint,
        solver_endpoint=solver_endpoint,
        seed_pool=pool,
        output_set=output,
        calibration_closed=calibration_closed,
        calibration_open=calibration_open,
    )
    return campaign
