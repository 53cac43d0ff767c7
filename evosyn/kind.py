"""EvoSyn's declared graph (paper 002): evolve a test-selection strategy, then synthesize.

One stream per campaign (``EvoSynCampaign``): the strategy is evolved on the seeds' matrices
before synthetic problems are filtered with it. Units are instances (seeds and synthetic
problems): pending while solutions and tests are collected, ready once the matrix is computed,
then kept or pruned (synthetic) or unusable (seed). An instance a step keeps failing on is given
up (a seed as unusable, a synthetic problem as pruned). The sandbox-execution budget pauses the
campaign like the call budget.
"""

from __future__ import annotations

from django.db.models import Q

from evolution.measurement import stage as measurement
from evolution.streams.kinds import (
    GIVE_UP_REASON,
    NEW,
    Kind,
    count_by,
    recorded_problems,
    register,
    stages_of,
    unit_transition,
)

from .models import EvoSynCampaign, Instance, InstanceRole, InstanceStatus
from .stages import evolve, execute, filter, solve, synthesize, write_tests
from .stages.common import METHOD, Action, Ctx, SandboxBudgetReached, load_context

St = InstanceStatus


# The campaign's kept problems (what the shared measurement stage measures).
kept_problems = measurement.kept_problems_of(METHOD)


def _prep_action(ctx: Ctx, inst: Instance) -> Action:
    s = ctx.settings
    if inst.solutions.count() < s.solutions_per_problem:
        return Action("solve", instance_id=inst.pk)
    # N testings (one unit-test list per test-writer call); test_calls calls per testing.
    testings = inst.tests.values("call").distinct().count()
    if testings < s.tests_per_problem and inst.test_calls_made < s.tests_per_problem * s.test_calls:
        return Action("write_tests", instance_id=inst.pk)
    return Action("execute", instance_id=inst.pk)


def action_for(ctx: Ctx) -> Action:
    """The next thing to do, from the rows alone (so a rerun after a crash picks up here)."""
    s = ctx.settings
    instances = list(ctx.esc.instances.order_by("role", "slot"))
    seeds = [i for i in instances if i.role == InstanceRole.SEED]
    for inst in seeds:
        if inst.status == InstanceStatus.PENDING:
            return _prep_action(ctx, inst)
    iterations = ctx.esc.strategies.count()
    if iterations <= s.max_iterations:
        return Action("evolve", number=iterations)
    synthetic = [i for i in instances if i.role == InstanceRole.SYNTHETIC]
    if len(synthetic) < s.synth_problems:
        return Action("synthesize", number=len(synthetic))
    for inst in synthetic:
        if inst.status == InstanceStatus.PENDING:
            return _prep_action(ctx, inst)
        if inst.status == InstanceStatus.READY:
            return Action("filter", instance_id=inst.pk)
    return Action("finished")


def work_finished(campaign_id: int) -> bool:
    return action_for(load_context(campaign_id)).name == "finished"


def next_action(ctx: Ctx):
    # Then the shared stage: the panel measures every kept problem (measure_kept).
    return measurement.after(action_for(ctx), ctx, kept_problems)


def give_up(ctx: Ctx, action: Action, reason: str) -> bool:
    if not action.instance_id:
        return False  # evolving or synthesizing: no item to give up on
    inst = Instance.objects.get(pk=action.instance_id)
    unit_transition(
        KIND,
        Instance.objects.filter(pk=inst.pk),
        source=(St.PENDING, St.READY),
        target=St.UNUSABLE if inst.role == InstanceRole.SEED else St.PRUNED,
        status_reason=reason,
    )
    return True


KIND = register(
    Kind(
        name="evosyn",
        label="EvoSyn",
        stream_model=EvoSynCampaign,
        unit_model=Instance,
        unit_state_field="status",
        states=tuple(St.values),
        edges=(
            (NEW, St.PENDING),
            (NEW, St.PRUNED),  # a synthesized problem that could not be parsed
            (St.PENDING, St.READY),
            (St.PENDING, St.UNUSABLE),
            (St.PENDING, St.PRUNED),
            (St.READY, St.KEPT),
            (St.READY, St.PRUNED),
            (St.READY, St.UNUSABLE),
        ),
        stages=(
            *stages_of(solve, write_tests, execute, evolve, synthesize, filter),
            *measurement.STAGES,
        ),
        load=load_context,
        next_action=next_action,
        give_up=measurement.measure_or(give_up),
        unit_of=lambda action: getattr(action, "instance_id", None),
        given_up=Q(status__in=(St.UNUSABLE, St.PRUNED), status_reason__regex=GIVE_UP_REASON),
        budget_errors=(SandboxBudgetReached,),
        # One seed instance per usable seed, made with the campaign.
        seeds=lambda ids: count_by(
            Instance.objects.filter(evosyn_id__in=ids, role=InstanceRole.SEED), "evosyn_id"
        ),
        accepted_problems=recorded_problems,
    )
)
