"""The demo checks what it announces: a leaderboard whose runs failed, or that judged only
some of the release's problems, stops the demo with the model and the reason instead of being
announced as "leaderboard for demo-panel"."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.core.management.base import CommandError

from evolution import jobs
from releases.demo import check_leaderboard
from releases.models import LeaderboardRun, LeaderboardSample, RunState
from tests.factories import ModelEndpointFactory
from tests.support.scoring import as_scoring_service, complete

from .board_world import board_world


class _Members:
    def __init__(self, endpoints):
        self.endpoints = endpoints

    def select_related(self, *_):
        return [SimpleNamespace(endpoint=e) for e in self.endpoints]


def _panel(*endpoints):
    return SimpleNamespace(name="demo-panel", members=_Members(endpoints))


def _run(release, endpoint, *, state, items, verdict="AC"):
    # Samples are written by the scoring service (a completed run's are immutable), then the
    # run ends.
    run = LeaderboardRun.objects.create(release=release, endpoint=endpoint, samples_per_problem=1)
    with as_scoring_service():
        LeaderboardSample.objects.bulk_create(
            LeaderboardSample(run=run, item=item, sample_index=0, code="print()", verdict=verdict)
            for item in items
        )
    if state == RunState.COMPLETED:
        return complete(run)
    token = jobs.claim(LeaderboardRun, run.pk)
    jobs.finish(LeaderboardRun, run.pk, token, state=state)
    return run


@pytest.mark.django_db
def test_a_failed_leaderboard_run_stops_the_demo_naming_the_model_and_the_reason():
    release = board_world().release
    endpoint = ModelEndpointFactory(name="solver-a (replayed)", model="solver-a")
    run = _run(release, endpoint, state=RunState.FAILED, items=[])
    LeaderboardRun.objects.filter(pk=run.pk).update(error="no recorded response for role=solver")
    run.refresh_from_db()
    with pytest.raises(CommandError, match=r"solver-a \(replayed\) failed .*no recorded response"):
        check_leaderboard(release=release, panel=_panel(endpoint))


@pytest.mark.django_db
def test_a_run_that_judged_only_some_problems_stops_the_demo():
    release = board_world().release
    endpoint = ModelEndpointFactory(name="solver-b (replayed)", model="solver-b")
    items = list(release.items.all())
    _run(release, endpoint, state=RunState.COMPLETED, items=items[:-1])
    with pytest.raises(CommandError, match=f"judged {len(items) - 1} of the release's"):
        check_leaderboard(release=release, panel=_panel(endpoint))


@pytest.mark.django_db
def test_a_complete_leaderboard_is_announced_with_what_was_checked():
    release = board_world().release
    a = ModelEndpointFactory(name="solver-a (replayed)", model="solver-a")
    b = ModelEndpointFactory(name="solver-b (replayed)", model="solver-b")
    items = list(release.items.all())
    _run(release, a, state=RunState.COMPLETED, items=items)
    _run(release, b, state=RunState.COMPLETED, items=items, verdict="WA")
    shown = check_leaderboard(release=release, panel=_panel(a, b))
    n = len(items)
    assert shown == f"solver-a {n}/{n} samples passed, solver-b 0/{n} samples passed"
