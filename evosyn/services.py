"""EvoSyn's services besides its stages (``evosyn/stages/``): creating a campaign, advancing it
one step, the D^random and D^relaxed comparison datasets, running it in this process."""

from __future__ import annotations

import random

from django.core.exceptions import ValidationError
from django.db import transaction

from evolution.models import Campaign, ModelEndpoint, ProblemSet
from evolution.models.campaigns import CampaignKind
from evolution.services import campaigns as campaign_services

from .config import EvoSynSettings
from .engine import search
from .models import (
    ControlSet,
    ControlVariant,
    EvoSynCampaign,
    Instance,
    InstanceRole,
    InstanceStatus,
)
from .stages.filter import selected_unit_tests

SEED_HARNESSES = ("assert", "function", "stdio")


def usable_seed(problem) -> bool:
    """A seed needs human tests and a form EvoSyn runs: function-level (harness assert or
    function, an entry point) or stdin/stdout (harness stdio)."""
    if problem.harness not in SEED_HARNESSES or not problem.tests.all():
        return False
    return problem.harness == "stdio" or bool(problem.entry_point)


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
    kind "evosyn" with one seed instance per usable seed (``usable_seed``): a function-level
    problem with human tests (e.g. HumanEval) or a stdin/stdout one (e.g. LiveCodeBench, the
    document's benchmark); the seed's test suite is its human testing. ``budget``: the
    campaign's ``budget_max_calls`` / ``_tokens`` / ``_cost``."""
    validated = campaign_services.campaign_settings_validate(
        EvoSynSettings, name=name, settings=settings
    )
    seeds = [
        p for p in seed_set.problems.order_by("id").prefetch_related("tests") if usable_seed(p)
    ]
    if seed_limit:
        seeds = seeds[:seed_limit]
    if not seeds:
        raise ValidationError(
            {
                "seed_set": [
                    f"seed set {seed_set.name!r} has no function-level or stdin/stdout "
                    "problem with human tests"
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
            entry_point="" if seed.harness == "stdio" else seed.entry_point,
        )
        for i, seed in enumerate(seeds)
    )
    return campaign


@transaction.atomic
def evosyn_control_build(
    *,
    campaign_id: int,
    rng_seed: int = 0,
    created_by=None,
    variant: str = ControlVariant.RANDOM,
) -> ControlSet:
    """A comparison dataset of the document's section 4.3.

    ``random`` (D^random): exactly the kept problems, each with ONE testing (a whole unit-test
    list) drawn at random from its N candidates instead of the strategy's selection; seeded by
    ``rng_seed`` per problem, so the same seed draws the same testings.
    ``relaxed`` (D^relaxed): the data without Zero-Variance Pruning, the kept problems plus
    those pruned only for zero variance (identical solutions included), each with the
    strategy's strongest solution and selected testing; a superset of the kept problems.
    ValidationError when there is nothing to build from."""
    if variant not in ControlVariant.values:
        raise ValidationError({"variant": [f"unknown variant {variant!r}"]})
    esc = EvoSynCampaign.objects.get(pk=campaign_id)
    synthetic = esc.instances.filter(role=InstanceRole.SYNTHETIC).select_related("kept_problem")
    if variant == ControlVariant.RANDOM:
        members = list(synthetic.filter(status=InstanceStatus.KEPT).order_by("slot"))
    else:
        members = [
            i
            for i in synthetic.filter(
                status__in=(InstanceStatus.KEPT, InstanceStatus.PRUNED)
            ).order_by("slot")
            if i.status == InstanceStatus.KEPT or (i.ranking or {}).get("relaxed")
        ]
    if not members:
        raise ValidationError("This campaign has kept no problem yet: nothing to build from.")
    items = []
    for inst in members:
        testings = inst.testings()
        if variant == ControlVariant.RANDOM:
            # One generator per problem: a problem's draw does not depend on the others.
            rng = random.Random(f"{rng_seed}:{inst.slot}")
            numbers = [rng.choice(sorted(testings))]
        else:
            numbers = list(inst.ranking["selected_tests"])
        strongest = inst.solutions.filter(index=inst.ranking.get("strongest_solution")).first()
        items.append(
            {
                "public_id": inst.kept_problem.public_id if inst.kept_problem else "",
                "slot": inst.slot,
                "title": inst.title,
                "statement": inst.statement,
                "harness": inst.harness,
                "entry_point": inst.entry_point,
                "reference_solution": strongest.code if strongest else "",
                "zero_variance": inst.status != InstanceStatus.KEPT,
                "testings": numbers,
                "tests": [
                    {"input": t.input, "output": t.output, "index": t.index, "testing": t.call}
                    for t in selected_unit_tests(testings, numbers)
                ],
            }
        )
    return ControlSet.objects.create(
        evosyn=esc, variant=variant, rng_seed=rng_seed, items=items, created_by=created_by
    )
