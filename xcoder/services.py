"""X-Coder's services besides its stages (``xcoder/stages/``): creating a campaign, advancing it
one step, issuing a ticket, running it in this process."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from evolution.models import Campaign, ModelEndpoint, ProblemSet
from evolution.models.campaigns import CampaignKind
from evolution.services import campaigns as campaign_services
from evolution.streams import runner

from .config import XcoderSettings
from .models import XcoderCampaign
from .stages.common import KIND_NAME


@transaction.atomic
def xcoder_campaign_create(
    *,
    name: str,
    seed_set: ProblemSet,
    generator_endpoint: ModelEndpoint,
    solver_endpoints: list[ModelEndpoint],
    settings: dict | None = None,
    seed_limit: int | None = None,
    created_by=None,
    panel=None,
    **budget,
) -> Campaign:
    """Validate the settings (ValidationError names each bad key) and create a draft campaign of
    kind "xcoder" with its generator and solver endpoints, and the problem set that collects
    its accepted problems. ``budget``: the campaign's ``budget_max_calls`` / ``_tokens`` /
    ``_cost``."""
    validated = campaign_services.campaign_settings_validate(
        XcoderSettings, name=name, settings=settings
    )
    solvers = list(solver_endpoints)
    if not solvers:
        raise ValidationError({"solver_endpoints": ["choose at least one solver model"]})
    if len({s.pk for s in solvers}) != len(solvers):
        raise ValidationError({"solver_endpoints": ["a solver model is listed twice"]})
    if sum(validated.samples_per_endpoint(len(solvers))) < validated.min_candidates:
        raise ValidationError(
            {
                "min_candidates": [
                    f"{len(solvers)} solver(s) x {validated.samples_per_endpoint(len(solvers))} "
                    "candidate(s) "
                    f"cannot reach min_candidates={validated.min_candidates}"
                ]
            }
        )
    judge = []
    if validated.difficulty_judge:
        judge = list(ModelEndpoint.objects.filter(name=validated.difficulty_judge))
        if not judge:
            raise ValidationError(
                {"difficulty_judge": [f"no model endpoint named {validated.difficulty_judge!r}"]}
            )
    seeds = seed_set.problems.exclude(reference_solution="").order_by("id")
    if not seeds.exists():
        raise ValidationError(
            {"seed_set": [f"seed set {seed_set.name!r} has no problem with a reference solution"]}
        )
    campaign = campaign_services.campaign_record_create(
        kind=CampaignKind.XCODER,
        name=name,
        validated=validated,
        endpoints=[generator_endpoint, *solvers, *judge],
        seed_set=seed_set,
        seed_limit=seed_limit,
        evolver=generator_endpoint,
        role_endpoints={"generator": generator_endpoint.pk},
        panel=panel,  # measures the accepted problems (evolution.measurement, measure_kept)
        created_by=created_by,
        **budget,
    )
    problem_set = ProblemSet.objects.create(
        name=f"xcoder-{campaign.pk}: {campaign.name}"[:120],
        description=f"Problems accepted by the X-Coder campaign {campaign.name!r}.",
        source="xcoder",
    )
    xc = XcoderCampaign.objects.create(
        campaign=campaign, generator_endpoint=generator_endpoint, problem_set=problem_set
    )
    xc.solver_endpoints.set(solvers)
    return campaign


def xcoder_issue_ticket(*, campaign: Campaign, only_if_quiet: bool) -> str | None:
    return runner.issue_ticket(
        KIND_NAME, campaign.pk, campaign=campaign, only_if_quiet=only_if_quiet
    )
