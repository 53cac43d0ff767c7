"""Freezing a release at scale (issue #36): its items and their tests are inserted in bulk, so a
freeze runs as many queries for many items as for few, and the snapshot is the same."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evolution.benchevolver.models import SolverAttempt
from evolution.models import TestCase
from releases import services
from tests.factories import CampaignFactory, LineageFactory, ModelEndpointFactory, ProblemFactory
from tests.support.gate_rules import SELECTION_TIME_OK

pytestmark = pytest.mark.django_db


def _freeze_queries(seeds: int) -> tuple[int, object]:
    campaign = CampaignFactory()
    endpoint = ModelEndpointFactory()
    for i in range(seeds):
        problem = ProblemFactory(
            statement=f"problem {seeds}-{i}: " + " ".join(f"w{i}x{j}" for j in range(30))
        )
        campaign.seed_set.problems.add(problem)
        for ordinal in range(3):
            TestCase.objects.create(
                problem=problem,
                tier="small",
                ordinal=ordinal,
                input_text=f"{i} {ordinal}\n",
                output_text=f"{i}\n",
            )
        lineage = LineageFactory(campaign=campaign, seed=problem, seed_passes=1, seed_attempts=2)
        for index, verdict in enumerate(("AC", "WA")):
            SolverAttempt.objects.create(
                lineage=lineage, endpoint=endpoint, verdict=verdict, attempt_index=index
            )
    bench = services.benchmark_create(name=f"bench of {seeds}", default_rules=SELECTION_TIME_OK)
    release = services.release_create(benchmark=bench, campaigns=[campaign])
    services.gate_run_create(release=release)
    with CaptureQueriesContext(connection) as queries:
        release = services.release_freeze(release=release)
    return len(queries), release


def test_a_freeze_of_many_items_runs_as_many_queries_as_a_freeze_of_few():
    few, small = _freeze_queries(2)
    many, large = _freeze_queries(12)
    assert (small.item_count, small.test_count) == (2, 6)
    assert (large.item_count, large.test_count) == (12, 36)
    assert many == few
    item = large.items.order_by("position").first()
    assert item.tests.count() == 3
    assert item.provenance["panel_results"][next(iter(item.provenance["panel_results"]))] == {
        "passes": 1,
        "attempts": 2,
        "verdicts": {"AC": 1, "WA": 1},
    }
