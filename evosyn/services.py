"""EvoSyn's services besides its stages (``evosyn/stages/``): creating a campaign, advancing it
one step, the random-test control dataset, running it in this process."""

from __future__ import annotations

import random

from django.core.exceptions import ValidationError
from django.db import transaction

from evolution.models import Campaign, ModelEndpoint, ProblemSet
from evolution.models.campaigns import CampaignKind
from evolution.services import campaigns as campaign_services
from evolution.streams import runner
from evolution.streams.runner import StepReport

from .config import EvoSynSettings
from .engine import search
from .models import ControlSet, EvoSynCampaign, Instance, InstanceRole, InstanceStatus
from .stages.common import KIND_NAME

SEED_HARNESSES = ("assert", "function")


@transaction.atomic
def evosyn_campaign_create(
    *,
    name: str,
    seed_set: ProblemSet,
    endpoint: ModelEndpoint,
    settings: dict | None = None,
    seed_limit: int | None = None,
    role_endpoints: dict | None = None,
    created_by=None,
    panel=None,
    **budget,
) -> Campaign:
    """Validate the settings (ValidationError names each bad key) and create a draft campaign of
    kind "evosyn" with one seed instance per usable seed: a function-level problem (harness
    assert or function, an entry point) with human tests, e.g. HumanEval. ``budget``: the
    campaign's ``budget_max_calls`` / ``_tokens`` / ``_cost``."""
    validated = campaign_services.campaign_settings_validate(
        EvoSynSettings, name=name, settings=settings
    )
    seeds = [
        p
        for p in seed_set.problems.order_by("id").prefetch_related("tests")
        if p.harness in SEED_HARNESSES and p.entry_point and p.tests.all()
    ]
    if seed_limit:
        seeds = seeds[:seed_limit]
    if not seeds:
        raise ValidationError(
            {
                "seed_set": [
                    f"seed set {seed_set.name!r} has no function-level problem with human tests"
                ]
            }
        )
    campaign = campaign_services.campaign_record_create(
        kind=CampaignKind.EVOSYN,
        name=name,
        validated=validated,
        endpoints=[endpoint, *campaign_services.role_endpoints_resolve(role_endpoints)],
        seed_set=seed_set,
        seed_limit=seed_limit,
        evolver=endpoint,
        role_endpoints=role_endpoints or {},
        panel=panel,  # measures the kept problems (evolution.measurement, measure_kept)
        created_by=created_by,
        **budget,
    )
    esc = EvoSynCampaign.objects.create(
        campaign=campaign, archive=search.empty_archive(validated.num_islands)
    )
    Instance.objects.bulk_create(
        Instance(
            evosyn=esc,
            role=InstanceRole.SEED,
            slot=i,
            problem=seed,
            title=seed.title,
            statement=seed.statement,
            entry_point=seed.entry_point,
        )
        for i, seed in enumerate(seeds)
    )
    return campaign


def evosyn_advance(
    *, campaign_id: int, ticket: str | None = None, schedule: bool = False
) -> StepReport:
    """Advance the campaign by one action through the shared runner (evolution.streams)."""
    return runner.advance(kind=KIND_NAME, stream_id=campaign_id, ticket=ticket, schedule=schedule)


@transaction.atomic
def evosyn_control_build(*, campaign_id: int, rng_seed: int = 0, created_by=None) -> ControlSet:
    """The random-test control (the document's D^random): the same kept problems, each with one
    test drawn at random from its N candidates instead of the strategy's selection.
    ValidationError when the campaign kept nothing yet."""
    esc = EvoSynCampaign.objects.get(pk=campaign_id)
    kept = list(
        esc.instances.filter(status=InstanceStatus.KEPT)
        .select_related("kept_problem")
        .order_by("slot")
    )
    if not kept:
        raise ValidationError("This campaign has kept no problem yet: nothing to build from.")
    rng = random.Random(rng_seed)
    items = []
    for inst in kept:
        tests = list(inst.tests.order_by("index"))
        chosen = rng.choice(tests)
        items.append(
            {
                "public_id": inst.kept_problem.public_id if inst.kept_problem else "",
                "title": inst.title,
                "statement": inst.statement,
                "entry_point": inst.entry_point,
                "reference_solution": inst.kept_problem.reference_solution
                if inst.kept_problem
                else "",
                "tests": [{"input": chosen.input, "output": chosen.output, "index": chosen.index}],
            }
        )
    return ControlSet.objects.create(
        evosyn=esc, rng_seed=rng_seed, items=items, created_by=created_by
    )


def evosyn_run_inline(*, campaign_id: int, max_steps: int | None = None, on_progress=None):
    """Drive the campaign in this process (the demo, `run_campaign --inline`, tests) until it
    finished, is paused or cancelled, or ``max_steps`` steps ran (it then stays running)."""
    return runner.run_inline(campaign_id=campaign_id, max_steps=max_steps, on_progress=on_progress)
