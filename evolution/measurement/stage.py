"""The measurement stage a campaign kind puts in its ``kind.py`` table.

A kind whose kept problems should carry a panel pass@1 (X-Coder, EvoSyn) adds ``STAGES`` to its
stages, asks the measurement once its own work is done and hands the measurement's actions to
it when giving up::

    kept_problems = measurement.kept_problems_of(METHOD)

    def next_action(ctx):  # action_for says "finished" when the kind's own work is done
        return measurement.after(action_for(ctx), ctx, kept_problems)

    Kind(..., next_action=next_action, give_up=measurement.measure_or(give_up), ...)

The stage reads only ``ctx.campaign`` (its ``panel`` measures) and ``ctx.settings.measure_k``
(K per panel model unless a member sets its own). One problem at a time: ``measure_solve``
(queue ``default``) asks the missing attempts, ``measure_judge`` (queue ``sandbox``) judges them
and records the result. An endpoint that keeps failing pauses the campaign naming it, as in
BenchEvolver; a problem a step keeps failing on is given up with a failed measurement.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from django.db.models import QuerySet

from evolution.models import Campaign, Problem
from evolution.streams.kinds import DEFAULT, SANDBOX, Stage

from . import panel as panel_calls
from . import services
from .models import Measurement

SOLVE, JUDGE = "measure_solve", "measure_judge"


@dataclass(frozen=True)
class MeasureAction:
    name: str  # measure_solve | measure_judge
    problem_id: int


def is_measure_action(action) -> bool:
    return isinstance(action, MeasureAction)


def _k(ctx) -> int:
    return getattr(ctx.settings, "measure_k", None) or panel_calls.defaults().target_eval_k


def skip_reason(campaign: Campaign, *, enabled: bool) -> str:
    """Why the campaign's kept problems are not measured ("" when they are)."""
    if not enabled:
        return "measurement of kept problems is turned off in this campaign's settings"
    if campaign.panel_id is None:
        return "the campaign has no panel to measure its kept problems with"
    return ""


def next_action(
    campaign: Campaign, problems: QuerySet[Problem], *, enabled: bool
) -> MeasureAction | None:
    """The next measurement step of the campaign's kept ``problems``; None when every one is
    measured (or failed), or the campaign measures nothing (``skip_reason``)."""
    if skip_reason(campaign, enabled=enabled):
        return None
    existing = {m.problem_id: m for m in Measurement.objects.filter(campaign=campaign)}
    for problem_id in problems.order_by("id").values_list("id", flat=True):
        m = existing.get(problem_id)
        if m is None:
            return MeasureAction(SOLVE, problem_id)
        phase = services.next_phase(m)
        if phase is not None:
            return MeasureAction(f"measure_{phase}", problem_id)
    return None


def kept_problems_of(method: str):
    """``kept_problems(campaign)``: the problems a campaign of ``method`` kept (each records
    its campaign in its metadata), what the measurement stage measures."""

    def kept_problems(campaign: Campaign) -> QuerySet[Problem]:
        return Problem.objects.filter(method=method, metadata__campaign=campaign.pk)

    return kept_problems


def after(action, ctx, kept_problems):
    """A kind's next action: its own ``action`` until that says "finished", then the panel
    measures every kept problem (when ``ctx.settings.measure_kept``)."""
    if action.name != "finished":
        return action
    return next_action(ctx.campaign, kept_problems(ctx.campaign), enabled=ctx.settings.measure_kept)


def measure_or(give_up_own):
    """A kind's ``give_up``: the measurement gives up on a problem it measures; every other
    action is the kind's own ``give_up_own(ctx, action, reason)``."""

    def give_up_measure_or_own(ctx, action, reason: str) -> bool:
        if is_measure_action(action):
            return give_up(ctx, action, reason)
        return give_up_own(ctx, action, reason)

    return give_up_measure_or_own


def _measurement(ctx, action: MeasureAction) -> Measurement:
    campaign = ctx.campaign
    return services.measurement_create(
        problem=Problem.objects.get(pk=action.problem_id),
        panel=campaign.panel,
        k=_k(ctx),
        campaign=campaign,
    )


def act_measure_solve(ctx, action: MeasureAction) -> None:
    measurement = _measurement(ctx, action)
    if services.next_phase(measurement) != "solve":
        return
    outcome = panel_calls.solve(measurement)
    if outcome.failing_endpoints:
        from evolution.services import campaigns as campaign_services

        names = ", ".join(repr(n) for n in outcome.failing_endpoints)
        with contextlib.suppress(campaign_services.TransitionError):
            campaign_services.campaign_pause(
                campaign_id=ctx.campaign.pk,
                reason=f"panel endpoint {names} keeps failing ({outcome.last_failure})"[:300],
            )


def act_measure_judge(ctx, action: MeasureAction) -> None:
    measurement = _measurement(ctx, action)
    services.measurement_advance(measurement_id=measurement.pk)


def give_up(ctx, action: MeasureAction, reason: str) -> bool:
    """A problem the measurement keeps failing on: its measurement fails with the reason."""
    measurement = Measurement.objects.filter(
        campaign=ctx.campaign, problem_id=action.problem_id
    ).first()
    if measurement is None:
        measurement = _measurement(ctx, action)
    services.measurement_fail(measurement, reason=reason)
    return True


STAGES = (
    Stage(SOLVE, act_measure_solve, DEFAULT),
    Stage(JUDGE, act_measure_judge, SANDBOX),
)

__all__ = [
    "JUDGE",
    "SOLVE",
    "STAGES",
    "MeasureAction",
    "give_up",
    "is_measure_action",
    "next_action",
    "skip_reason",
]
