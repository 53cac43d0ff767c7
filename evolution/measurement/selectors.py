"""Reads of panel measurements: what the gate, review filters and pages know about a problem's
measured difficulty, whichever kind made it.

``problem_difficulty`` answers for any problem ids with one ``Measured`` each: what a kind's
own panel measured where one did (``Kind.panel_facts``: a BenchEvolver candidate's panel, a
seed's calibration; the same figure the gate reads), else the latest completed shared
measurement (``Measurement``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import QuerySet

from evolution.models import Problem
from evolution.streams.kinds import problem_panel_facts

from .models import Measurement, MeasurementBatch, MeasurementState


@dataclass(frozen=True)
class Measured:
    passes: int
    attempts: int
    level: int | None
    source: str  # "candidate" | "calibration" | "measurement"
    measurement_id: int | None = None

    @property
    def pass_rate(self) -> float:
        return self.passes / self.attempts if self.attempts else 0.0


def latest_completed(problem_ids: Iterable[int]) -> dict[int, Measurement]:
    """The newest completed shared measurement of each problem that has one."""
    out: dict[int, Measurement] = {}
    for m in (
        Measurement.objects.filter(
            problem_id__in=list(problem_ids), state=MeasurementState.COMPLETED
        )
        .select_related("panel")
        .order_by("problem_id", "-measured_at", "-id")
    ):
        out.setdefault(m.problem_id, m)
    return out


def problem_difficulty(problem_ids: Iterable[int]) -> dict[int, Measured]:
    ids = list(problem_ids)
    out: dict[int, Measured] = {}
    for pid, facts in problem_panel_facts(ids).items():
        if facts.attempts:
            out[pid] = Measured(
                passes=facts.passes or 0,
                attempts=facts.attempts,
                level=facts.level,
                source=facts.source,
            )
    for pid, m in latest_completed(set(ids) - set(out)).items():
        out[pid] = Measured(
            passes=m.passes or 0,
            attempts=m.attempts,
            level=m.level,
            source="measurement",
            measurement_id=m.pk,
        )
    return out


def problem_measurements(problem: Problem) -> QuerySet[Measurement]:
    return problem.measurements.select_related("panel", "campaign", "batch").order_by(
        "-created_at", "-id"
    )


def campaign_measurements(campaign) -> QuerySet[Measurement]:
    return (
        Measurement.objects.filter(campaign=campaign)
        .select_related("problem", "panel")
        .order_by("problem_id")
    )


def campaign_measurement_summary(campaign) -> dict:
    """Counts for a campaign page: measured, pending and failed kept problems."""
    counts = {s: 0 for s in MeasurementState.values}
    for state in Measurement.objects.filter(campaign=campaign).values_list("state", flat=True):
        counts[state] += 1
    return counts


def batch_list(*, problem_set=None) -> QuerySet[MeasurementBatch]:
    qs = MeasurementBatch.objects.select_related("panel", "problem_set", "created_by")
    if problem_set is not None:
        qs = qs.filter(problem_set=problem_set)
    return qs


def batch_measurements(batch: MeasurementBatch) -> QuerySet[Measurement]:
    return batch.measurements.select_related("problem").order_by("problem_id")


def campaign_context(campaign, *, enabled: bool, kept_count: int) -> dict:
    """What a kind's campaign page shows about the measurement of its kept problems."""
    from .stage import skip_reason

    rows = list(campaign_measurements(campaign))
    return {
        "skip_reason": skip_reason(campaign, enabled=enabled),
        "panel": campaign.panel,
        "rows": rows,
        "kept": kept_count,
        "measured": sum(1 for m in rows if m.state == MeasurementState.COMPLETED),
        "failed": sum(1 for m in rows if m.state == MeasurementState.FAILED),
    }


def kept_measurement(campaign, settings_class, kept) -> dict:
    """The campaign page's panel measurement of the problems a kind kept (``kept``), when its
    settings ask for it (``measure_kept``)."""
    return campaign_context(
        campaign,
        enabled=settings_class.from_dict(campaign.settings).measure_kept,
        kept_count=kept.count(),
    )
