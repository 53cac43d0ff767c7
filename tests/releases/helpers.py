from __future__ import annotations

import pytest

from releases import services
from tests.support.gate_rules import SELECTION_TIME_OK

from .builders import crafted_world


def frozen_release(*, publish: bool = False, name: str = "LiveCodeBench-Plus"):
    """The crafted world gated and frozen (3 items: E-OK, E-OVERRIDE, S2)."""
    world = crafted_world(tag="" if name == "LiveCodeBench-Plus" else f"-{name}")
    bench = services.benchmark_create(
        default_rules=SELECTION_TIME_OK, name=name, description="Harder problems, verified."
    )
    release = services.release_create(
        benchmark=bench, campaigns=[world.campaign], notes="First cut."
    )
    services.gate_run_create(release=release)
    release = services.release_freeze(release=release)
    if publish:
        release = services.release_publish(release=release)
    return world, release


@pytest.fixture
def frozen(db):
    return frozen_release()


@pytest.fixture
def published(db):
    return frozen_release(publish=True)


@pytest.fixture
def frozen_tx(transactional_db):
    """Like ``frozen`` but committed: leaderboard evaluation works from worker threads, which
    have their own database connections."""
    return frozen_release()
