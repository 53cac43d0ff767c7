"""The gate's facts are computed once and kept on its run: freezing publishes where each
item's panel figure came from as the gate read it, not what the kinds or the shared panel
measurement say at freeze time. A measurement taken between the gate and the freeze would
otherwise be named as the source of a figure it did not give."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from evolution.measurement.models import Measurement
from releases import services
from releases.models import GateRun
from tests.factories import MeasurementFactory
from tests.support.gate_rules import SELECTION_TIME_OK

from .builders import crafted_world

pytestmark = pytest.mark.django_db


def _measured(problem, passes: int, attempts: int, when) -> Measurement:
    return MeasurementFactory(
        problem=problem,
        passes=passes,
        attempts=attempts,
        level=4,
        per_model={"solver-a": {"passes": passes, "attempts": attempts}},
        measured_at=when,
    )


def _draft(world):
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="Kept")
    return services.release_create(benchmark=bench, campaigns=[world.campaign])


def test_freeze_publishes_the_source_of_the_figure_the_gate_read():
    world = crafted_world()
    unmeasured_seed = world.seeds["S3"]  # its campaign never calibrated it
    before = _measured(unmeasured_seed, 3, 8, timezone.now() - timedelta(days=1))
    release = _draft(world)
    services.gate_run_create(release=release)
    services.curation_decide(
        release=release, problem=unmeasured_seed, include=True, justification="a hard original"
    )
    # Measured again after the gate ran: the gate never read this one.
    _measured(unmeasured_seed, 0, 8, timezone.now())
    frozen = services.release_freeze(release=release)

    item = frozen.items.get(problem=unmeasured_seed)
    assert item.provenance["panel"] == {"passes": 3, "attempts": 8}
    assert item.provenance["measurement"]["id"] == before.pk
    assert item.provenance["panel_results"] == {"solver-a": {"passes": 3, "attempts": 8}}
    # An evolved item keeps its candidate's record as the gate read it.
    ok = frozen.items.get(problem=world.evolved["E-OK"])
    assert ok.provenance["validation_ledger"] == [{"vote": "agree", "source": "triangulation"}]
    assert ok.provenance["panel_results"] == {"solver-a": {"passes": 3, "attempts": 8}}


def test_the_gate_run_keeps_each_candidates_source_and_an_older_run_is_read_as_before():
    world = crafted_world()
    release = _draft(world)
    run = services.gate_run_create(release=release)
    kept = run.provenance[str(world.evolved["E-OK"].pk)]
    assert kept["validation_ledger"] == [{"vote": "agree", "source": "triangulation"}]
    # A run stored before runs kept their sources: freeze asks the kinds, as it did then.
    GateRun.objects.filter(pk=run.pk).update(provenance=None)
    frozen = services.release_freeze(release=release)
    ok = frozen.items.get(problem=world.evolved["E-OK"])
    assert ok.provenance["validation_ledger"] == [{"vote": "agree", "source": "triangulation"}]
