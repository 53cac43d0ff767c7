"""BenchEvolver screens every accepted candidate (a real campaign over the loopback server): a
recalled public problem, Codeforces 1873A renamed and reworded, is accepted with its nearest
public problem in its validation ledger and on its page; a new problem's nearest is far."""

from __future__ import annotations

import pytest

from evolution.screening.models import ProblemScreen
from tests.evolution.benchevolver.helpers import fake_server  # noqa: F401 (fixture)

from .recall_world import recall_world

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _screen_entry(problem):
    cand = problem.source_candidate
    (entry,) = [e for e in cand.validation_ledger if e["step"] == "contamination screen"]
    return cand, entry


def test_an_accepted_candidate_carries_its_nearest_public_problems(fake_server, personas):  # noqa: F811
    world = recall_world(fake_server)
    admin_client = personas.admin.client

    cand, entry = _screen_entry(world.recalled)
    nearest = entry["nearest"][0]
    assert (nearest["dataset"], nearest["origin_id"]) == ("livecodebench", "1873_A")
    assert nearest["date"] == "2023-08-21"
    # Renamed variables: the normalised program is the public reference's, token for token.
    assert nearest["code"] == 1.0 and nearest["similarity"] == 1.0
    assert 0.1 < nearest["statement"] < 0.6  # reworded
    assert entry["outcome"].startswith("nearest public problem: livecodebench 1873_A")
    assert "recorded, not decided" in entry["reason"]
    assert "humaneval 164" in entry["index"] and "livecodebench 1" in entry["index"]
    # Its own seed (demo/sort-numbers) is listed apart, never counted.
    assert [(n["origin_id"], n["relation"]) for n in entry["lineage"]] == [
        ("demo/sort-numbers", "its seed")
    ]
    assert cand.decision == "accepted"  # recorded, not rejected

    stored = ProblemScreen.objects.get(problem=world.recalled)
    assert stored.context == "benchevolver" and stored.max_similarity == 1.0
    assert stored.record["neighbours"][0]["public_id"] == world.public.public_id

    novel_cand, novel = _screen_entry(world.novel)
    assert novel["max_similarity"] < 0.3
    assert novel["nearest"][0]["origin_id"] != "1873_A"
    assert ProblemScreen.objects.get(problem=world.novel).max_similarity < 0.3

    page = admin_client.get(f"/candidates/{cand.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="screen-summary"' in html and "nearest public problem: livecodebench 1873_A" in html
    assert f'href="/problems/{world.public.public_id}/"' in html
    problem_page = admin_client.get(f"/problems/{world.recalled.public_id}/").content.decode()
    assert 'id="contamination-screen"' in problem_page and "1873_A" in problem_page
