"""Stage ``calibrate``: the coarse filter is asked about the labelled probe sets (closed-ended and
open-ended problems), so its false-positive and false-negative rates are known."""

from __future__ import annotations

from evolution.models import Problem

from ..models import FilterProbe
from .common import Action, Ctx, _filter_verdict, stable_id


def _calibrate(ctx: Ctx, action: Action) -> None:
    problem = Problem.objects.get(pk=action.problem_id)
    accepted, verdict = _filter_verdict(
        ctx, problem.statement, f"calibrate={action.label};problem={stable_id(problem)}"
    )
    FilterProbe.objects.get_or_create(
        frontier=ctx.fc,
        problem=problem,
        label=action.label,
        defaults={"accepted": accepted, "verdict": verdict},
    )
