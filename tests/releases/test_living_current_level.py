"""A release's calibration page shows each problem's level as the panel last measured it,
dated, beside the pass@1 it comes from (issue: the Level column kept the level a problem was
accepted with while the pass@1 beside it was the latest re-measurement's)."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse
from django.utils import timezone

from evolution.benchevolver.models import Candidate
from releases import living
from releases.models import PanelSeat
from review.models import Review
from tests.support.fake_openai import FakeOpenAI

from .builders import review
from .helpers import frozen_release
from .living_support import Panel, endpoint

pytestmark = pytest.mark.django_db(transaction=True)

# Expert difficulty (both reviewers): E-OK hard, E-OVERRIDE middling, the seed S2 easy. The panel
# solves E-OK and E-OVERRIDE 7 times in 8 and S2 never, so S2 and E-OK are the two problems
# the experts and the panel order furthest apart.
EXPERTS = {"E-OK": 5, "E-OVERRIDE": 3, "S2": 1}


def _calibration(client, release) -> tuple[dict[str, str], dict[str, object]]:
    """The disagreement table's Level cell per public id, and the figure's level per title."""
    page = client.get(reverse("releases:release_calibration", args=[release.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    cells = {
        pid: re.sub(r"<[^>]+>", "", cell).strip()
        for pid, cell in re.findall(
            r'<tr class="disagreement"><td><code>(\w+)</code>.*?<td class="level">(.*?)</td>',
            html,
            re.S,
        )
    }
    figure = json.loads(re.search(r'id="calibration-figure"[^>]*>(.*?)</script>', html, re.S)[1])
    levels = {}
    for trace in figure["data"]:
        for row in trace["customdata"]:
            levels[row[0]] = row[2]
    return cells, levels


def test_the_level_beside_a_re_measured_pass_at_1_is_the_re_measured_one(personas):
    world, release = frozen_release(publish=True)
    ids = {key: world.problem(key).public_id for key in EXPERTS}
    titles = {key: world.problem(key).title for key in EXPERTS}
    review(world, world.problem("S2"), (4, "valid"), (4, "valid"))
    for key, difficulty in EXPERTS.items():
        Review.objects.filter(item__problem=world.problem(key)).update(difficulty=difficulty)
    decided = timezone.now().replace(year=2026, month=10, day=1, microsecond=0)
    curator = personas.curator.client

    # Before any re-measurement: the levels measured when the problems were accepted (3 each,
    # the crafted campaign's). Only S2 is half the release apart in the two orderings
    # (campaign pass@1: E-OK 3/8, E-OVERRIDE 4/8, S2 2/8).
    before, levels = _calibration(curator, release)
    assert levels == {titles["E-OK"]: 3, titles["E-OVERRIDE"]: 3, titles["S2"]: 3}

    # The panel re-measures: E-OK 7/8 (level 2 by the default thresholds), S2 0/8 (level 5).
    with FakeOpenAI() as server:
        server.responder = Panel()
        for name in ("weak", "strong"):
            PanelSeat.objects.create(
                benchmark=release.benchmark, endpoint=endpoint(server, name), samples=4
            )
        r = living.remeasurement_create(
            benchmark=release.benchmark, trigger="panel_change", reason="panel"
        )
        r = living.remeasurement_execute(remeasurement_id=r.pk)
    assert r.state == "completed", r.error
    day = r.points.get(public_id=ids["E-OK"]).measured_at.strftime("%Y-%m-%d")
    cells, levels = _calibration(curator, release)
    # The figure's hover and the table give the level of the re-measurement, dated.
    assert levels == {titles["E-OK"]: 2, titles["E-OVERRIDE"]: 2, titles["S2"]: 5}
    assert cells == {ids["E-OK"]: f"2 (re-measured {day})", ids["S2"]: f"5 (re-measured {day})"}
    # Before it, the table said where the level came from.
    assert before == {ids["S2"]: "3 (seed calibration)"}
    now = living.current_levels(release=release)
    assert now[ids["S2"]] == {
        "level": 5,
        "measured_at": r.points.get(public_id=ids["S2"]).measured_at,
        "source": "re-measured",
    }
    # A problem never re-measured keeps the level it was accepted with, dated by its decision.
    _, other = frozen_release(publish=True, name="Other")
    problem = other.items.get(title="Evolved E-OK").problem
    Candidate.objects.filter(accepted_problem=problem).update(decided_at=decided)
    then = living.current_levels(release=other)[problem.public_id]
    assert then == {"level": 3, "measured_at": decided, "source": "at acceptance"}
    # What the release froze is not rewritten.
    item = release.items.get(public_id=ids["E-OK"])
    assert item.provenance["candidate"]["level"] == 3
