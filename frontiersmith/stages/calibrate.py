"""Stage ``calibrate``: the coarse filter is asked about the labelled probe sets (closed-ended and
open-ended problems), so its false-positive and false-negative rates are known."""

from __future__ import annotations

from evolution.llm import fanout
from evolution.models import Problem

from ..models import FilterProbe
from .common import (
    Action,
    Ctx,
    coarse_filter_verdict,
    fan_out_calls,
    probes_waiting,
    raise_first,
    stable_id,
)


def _calibrate(ctx: Ctx, action: Action) -> None:
    """The action's probe and the next probes not asked yet, side by side."""
    probes = [(action.label, action.problem_id)]
    probes += [p for p in probes_waiting(ctx.fc) if p != probes[0]]
    probes = probes[: fanout.step_calls(ctx.mutator_width())]
    problems = Problem.objects.in_bulk([pid for _, pid in probes])

    def ask(label, pid):
        problem = problems[pid]
        return coarse_filter_verdict(
            ctx, problem.statement, f"calibrate={label};problem={stable_id(problem)}"
        )

    outcomes = fan_out_calls([lambda p=p: ask(*p) for p in probes], ctx.mutator_width())
    for (label, pid), outcome in zip(probes, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            continue
        accepted, verdict = outcome
        FilterProbe.objects.get_or_create(
            frontier=ctx.fc,
            problem=problems[pid],
            label=label,
            defaults={"accepted": accepted, "verdict": verdict},
        )
    raise_first(outcomes)
