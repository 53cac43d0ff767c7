"""A living benchmark: re-measure the published release when the panel changes (or on a
schedule), record each problem's dated difficulty and flag the problems the panel saturated.

The panel's pass@1 on a problem is POOLED over the panel's samples (passes / attempts over
every model), as the gate combines the campaign panel's attempts. Its 95% interval is the
Wilson score interval for a binomial proportion:

    centre = (p + z²/2n) / (1 + z²/n),  half = z·sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n),  z = 1.96

which stays inside [0, 1] and is defined at p = 0 and p = 1, where the normal interval is not.
A problem is saturated when that pass@1 exceeds the release gate's ``max_pass_at_1`` (0.75 by
default, the upper end of the band a problem had to lie in to enter the release); the models
that saturated it are the panel models whose own pass@1 on it exceeds the same bound.
"""

from __future__ import annotations

import math

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from . import leaderboard
from .gate import GateRules, RulesError
from .living_models import (
    DifficultyPoint,
    PanelSeat,
    Remeasurement,
    RemeasurementTrigger,
    SaturationFlag,
)
from .models import Benchmark, LeaderboardRun, Release, ReleaseState, RunState

Z95 = 1.959963984540054


def wilson_interval(passes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval of passes/n (see the module docstring); (0, 1) when n = 0."""
    if n <= 0:
        return 0.0, 1.0
    p = passes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def saturation_bound(release: Release) -> float:
    try:
        return GateRules.from_dict(release.gate_rules).max_pass_at_1
    except RulesError:
        return GateRules().max_pass_at_1


def latest_published(benchmark: Benchmark) -> Release | None:
    return (
        Release.objects.filter(benchmark=benchmark, state=ReleaseState.PUBLISHED)
        .order_by("-major", "-minor", "-patch")
        .first()
    )


# --- the panel --------------------------------------------------------------------------------


@transaction.atomic
def panel_seat_add(*, benchmark: Benchmark, endpoint, samples: int = 4, by=None) -> Remeasurement:
    """Put ``endpoint`` on the benchmark's panel and re-measure its published release with
    the new panel (enqueued when the transaction commits)."""
    if not 1 <= samples <= 100:
        raise ValidationError({"samples": "Samples per problem must be between 1 and 100."})
    if latest_published(benchmark) is None:
        raise ValidationError({"benchmark": f"{benchmark.name} has no published release yet."})
    try:
        with transaction.atomic():
            PanelSeat.objects.create(
                benchmark=benchmark, endpoint=endpoint, samples=samples, added_by=by
            )
    except IntegrityError:
        raise ValidationError({"endpoint": f"{endpoint.name} is already on the panel."})
    return remeasurement_start(
        benchmark=benchmark,
        trigger=RemeasurementTrigger.PANEL_CHANGE,
        reason=f"{endpoint.name} joined the panel",
        by=by,
    )


def remeasurement_create(
    *, benchmark: Benchmark, trigger: str, reason: str = "", by=None
) -> Remeasurement:
    """A queued re-measurement of the latest published release by the current panel: one
    leaderboard run per panel model, reusing a completed run with the same sample count."""
    release = latest_published(benchmark)
    if release is None:
        raise ValidationError({"benchmark": f"{benchmark.name} has no published release yet."})
    seats = list(PanelSeat.objects.filter(benchmark=benchmark).select_related("endpoint"))
    if not seats:
        raise ValidationError({"benchmark": f"{benchmark.name} has no evaluation panel yet."})
    remeasurement = Remeasurement.objects.create(
        benchmark=benchmark, release=release, trigger=trigger, reason=reason[:300], created_by=by
    )
    runs = []
    for seat in seats:
        run = (
            LeaderboardRun.objects.filter(
                release=release,
                endpoint=seat.endpoint,
                samples_per_problem=seat.samples,
                state=RunState.COMPLETED,
            )
            .order_by("-finished_at")
            .first()
        )
        if run is None:
            run = leaderboard.run_create(
                release=release, endpoint=seat.endpoint, samples=seat.samples, by=by
            )
        runs.append(run)
    remeasurement.runs.set(runs)
    return remeasurement


def remeasurement_start(**kwargs) -> Remeasurement:
    from .tasks import enqueue_remeasurement

    remeasurement = remeasurement_create(**kwargs)
    enqueue_remeasurement(remeasurement.pk)
    return remeasurement


def remeasure_scheduled() -> list[int]:
    """Beat's entry: a re-measurement of every benchmark that has a panel and a published
    release. Returns the ids started."""
    started = []
    for benchmark in Benchmark.objects.filter(panel_seats__isnull=False).distinct():
        if latest_published(benchmark) is None:
            continue
        with transaction.atomic():
            started.append(
                remeasurement_start(
                    benchmark=benchmark,
                    trigger=RemeasurementTrigger.SCHEDULE,
                    reason="scheduled re-measurement",
                ).pk
            )
    return started


# --- executing -------------------------------------------------------------------------------


def remeasurement_execute(*, remeasurement_id: int) -> Remeasurement:
    """Run every unfinished leaderboard run of the re-measurement, then record the points and
    flags. Safe to call again: finished runs are skipped and recording is idempotent."""
    claimed = Remeasurement.objects.filter(
        pk=remeasurement_id, state__in=["queued", "running", "failed"]
    ).update(state="running", error="")
    remeasurement = Remeasurement.objects.select_related("release").get(pk=remeasurement_id)
    if not claimed:
        return remeasurement
    runs = list(remeasurement.runs.all())
    failed = []
    for run in runs:
        if run.state != RunState.COMPLETED:
            run = leaderboard.run_execute(run_id=run.pk)
        if run.state != RunState.COMPLETED:
            failed.append(f"{run.label}: {run.error or run.state}")
    if failed:
        Remeasurement.objects.filter(pk=remeasurement_id).update(
            state="failed", error="; ".join(failed)[:2000]
        )
        return Remeasurement.objects.get(pk=remeasurement_id)
    summary = _record(remeasurement, list(remeasurement.runs.all()))
    Remeasurement.objects.filter(pk=remeasurement_id).update(
        state="completed", summary=summary, finished_at=timezone.now()
    )
    return Remeasurement.objects.get(pk=remeasurement_id)


@transaction.atomic
def _record(remeasurement: Remeasurement, runs: list[LeaderboardRun]) -> dict:
    release = remeasurement.release
    bound = saturation_bound(release)
    now = timezone.now()
    per_model: dict[str, list[dict]] = {}
    for run in runs:
        for row in run.summary.get("per_item", []):
            per_model.setdefault(row["public_id"], []).append(
                {
                    "label": run.label,
                    "n": row["n"],
                    "c": row["c"],
                    "pass_at_1": row["c"] / row["n"] if row["n"] else 0.0,
                }
            )
    DifficultyPoint.objects.filter(remeasurement=remeasurement).delete()
    already = set(
        SaturationFlag.objects.filter(release=release).values_list("public_id", flat=True)
    )
    newly = []
    saturated = 0
    for item in release.items.order_by("position"):
        rows = per_model.get(item.public_id, [])
        n = sum(r["n"] for r in rows)
        c = sum(r["c"] for r in rows)
        p = c / n if n else 0.0
        low, high = wilson_interval(c, n)
        DifficultyPoint.objects.create(
            remeasurement=remeasurement,
            release=release,
            public_id=item.public_id,
            measured_at=now,
            pass_at_1=p,
            low=low,
            high=high,
            samples=n,
            passes=c,
            models_detail=rows,
        )
        if n and p > bound:
            saturated += 1
            if item.public_id not in already:
                SaturationFlag.objects.create(
                    release=release,
                    public_id=item.public_id,
                    flagged_at=now,
                    pass_at_1=p,
                    bound=bound,
                    saturating_models=[r["label"] for r in rows if r["pass_at_1"] > bound],
                    remeasurement=remeasurement,
                )
                newly.append(item.public_id)
    return {
        "bound": bound,
        "problems": release.items.count(),
        "saturated": saturated,
        "newly_saturated": newly,
        "models": [run.label for run in runs],
    }


# --- reading ---------------------------------------------------------------------------------


def saturation_share(*, release: Release) -> dict:
    """How much of ``release`` the panel has saturated (flags are never withdrawn: a problem
    once solved past the bound stays suspect, as a contaminated one does)."""
    problems = release.item_count or release.items.count()
    flagged = SaturationFlag.objects.filter(release=release).count()
    return {
        "saturated": flagged,
        "problems": problems,
        "share": flagged / problems if problems else 0.0,
        "bound": saturation_bound(release),
        "measured": Remeasurement.objects.filter(release=release, state="completed").exists(),
    }


def difficulty_history(*, release: Release, public_id: str) -> list[DifficultyPoint]:
    return list(
        DifficultyPoint.objects.filter(
            release=release, public_id=public_id, remeasurement__state="completed"
        ).order_by("measured_at", "id")
    )
