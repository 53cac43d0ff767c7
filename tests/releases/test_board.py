"""The public leaderboard's controls without a browser: the date window recomputes every
score over the problems released after the date, the model filter, sorting by any column
(breakdowns included), a model without a release date said in words, and the page cache
keyed on the controls."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.test import Client

from releases.leaderboard import board
from releases.leaderboard.stats import bootstrap_mean

from .board_world import board_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    cache.clear()
    yield board_world()
    cache.clear()


def _values(b: board.Board, column: str = "pass1") -> dict[str, float]:
    return {r["model"]: r[column]["value"] for r in b.rows}


def test_the_date_window_recomputes_scores_over_the_problems_released_after_it(world):
    release = world.release
    everything = board.build(release=release)
    assert _values(everything) == pytest.approx({"model-a": 0.5, "model-b": 2 / 3})
    assert everything.problems == 3 and everything.dates[0].isoformat() == "2023-05-01"
    # From 2024-01-01: E-OK and E-OVERRIDE; from 2024-02-01: E-OVERRIDE alone.
    window = board.build(release=release, after=board.parse_after("2024-01-01"))
    assert window.problems == 2
    assert _values(window) == pytest.approx({"model-a": 0.5, "model-b": 0.5})
    late = board.build(release=release, after=board.parse_after("2024-02-01"))
    assert late.problems == 1 and [r["model"] for r in late.rows] == ["model-b", "model-a"]
    assert _values(late) == pytest.approx({"model-a": 0.0, "model-b": 1.0})
    # The interval is the same seeded bootstrap over the per-problem scores in view.
    row = next(r for r in window.rows if r["model"] == "model-a")
    assert row["pass1"] == bootstrap_mean([1.0, 0.0], seed=0).to_dict()
    # Breakdowns follow the window: no original problem after 2024-01-01.
    assert row["by_origin"] == [row["breakdown"]["origin"]["evolved"], None]
    assert board.build(release=release, after=board.parse_after("not a date")).after is None


def test_breakdowns_by_measured_difficulty_and_origin_and_sorting_by_them(world):
    b = board.build(release=world.release, sort="d:hard", descending=True)
    assert b.difficulties == ["medium", "hard"] and b.origins == ["evolved", "original"]
    assert [r["model"] for r in b.rows] == ["model-b", "model-a"]  # S2: 4/4 against 2/4
    a = next(r for r in b.rows if r["model"] == "model-a")
    assert [e["value"] for e in a["by_difficulty"]] == pytest.approx([0.5, 0.5])
    assert [e["value"] for e in a["by_origin"]] == pytest.approx([0.5, 0.5])
    b = board.build(release=world.release, sort="o:evolved", descending=False)
    assert b.sort == "o:evolved" and [r["model"] for r in b.rows] == ["model-a", "model-b"]
    assert board.build(release=world.release, sort="nonsense").sort == "pass1"
    released = board.build(release=world.release, sort="released", descending=True)
    assert [r["model"] for r in released.rows] == ["model-a", "model-b"]


def _rows(page: str) -> list[str]:
    return re.findall(r'<tr data-model="([^"]+)"', page)


def test_the_page_filters_models_and_says_when_a_release_date_is_unknown(world, settings):
    settings.PUBLIC_PAGE_CACHE_SECONDS = 0
    client = Client()
    page = client.get(world.url).content.decode()
    assert _rows(page) == ["model-b", "model-a"]
    assert "3 of 3 problems in view · 2 of 2 models" in page
    b_row = page[page.index('<tr data-model="model-b"') :].split("</tr>")[0]
    assert "release date unknown" in b_row and "needs the model's release date" in b_row
    assert "not checked (no release date)" in b_row
    a_row = page[page.index('<tr data-model="model-a"') :].split("</tr>")[0]
    assert "2024-03-01" in a_row
    filtered = client.get(world.url + "?model=MODEL-A").content.decode()
    assert _rows(filtered) == ["model-a"] and "2 models" in filtered
    none = client.get(world.url + "?model=zzz").content.decode()
    assert _rows(none) == [] and "No model matches “zzz”." in none
    windowed = client.get(world.url + "?after=2024-02-01&sort=model&dir=asc").content.decode()
    assert "1 of 3 problems in view (released on or after 2024-02-01" in windowed
    assert '<input type="range" id="after-range" min="0" max="3" step="1" value="3"' in windowed
    # Sort links keep the other controls.
    assert 'href="?after=2024-02-01&amp;sort=pass1&amp;dir=desc"' in windowed
    assert 'id="leaderboard-chart-data"' in windowed


def test_a_score_over_one_problem_says_n_is_too_small_instead_of_an_interval(world, settings):
    """model-a's after-release score keeps E-OVERRIDE alone, and S2 is the only hard and the
    only original problem: a bootstrap over one value is the value itself ("[0.0%, 0.0%]")."""
    settings.PUBLIC_PAGE_CACHE_SECONDS = 0
    page = Client().get(world.url).content.decode()
    a_row = page[page.index('<tr data-model="model-a"') :].split("</tr>")[0]
    clean = a_row[a_row.index('class="score clean"') :].split("</td>")[0]
    assert "<b>0.0%</b>" in clean and "n=1, no interval" in clean and "[" not in clean
    breakdown = page[page.index('<tr data-breakdown-model="model-a"') :].split("</tr>")[0]
    assert breakdown.count("n=1, no interval") == 2  # hard, original
    assert breakdown.count('class="muted ci"') == 2  # medium and evolved: two problems each
    assert "[0.0%, 0.0%]" not in page and "[100.0%, 100.0%]" not in page
    assert "[50.0%, 50.0%]" not in page


def test_the_page_cache_keys_on_the_controls(world, settings):
    settings.PUBLIC_PAGE_CACHE_SECONDS = 600
    client = Client()
    first = client.get(world.url + "?after=2024-02-01&model=model")
    assert first["X-Page-Cache"] == "miss"
    other = client.get(world.url + "?after=2024-01-01&model=model")
    assert other["X-Page-Cache"] == "miss" and other.content != first.content
    same = client.get(world.url + "?model=model&after=2024-02-01&utm_source=x")
    assert same["X-Page-Cache"] == "hit" and same.content == first.content
    sorted_page = client.get(world.url + "?after=2024-02-01&model=model&sort=model")
    assert sorted_page["X-Page-Cache"] == "miss"


def test_the_api_takes_the_same_controls_as_the_page(world):
    client = Client()
    url = f"/api/releases/{world.release.pk}/leaderboard"
    rows = client.get(url).json()
    assert [r["model"] for r in rows] == ["model-b", "model-a"]
    assert rows[1]["model_release_date"] == "2024-03-01" and rows[0]["model_release_date"] is None
    late = client.get(url, {"after": "2024-02-01"}).json()
    assert {r["model"]: r["pass1"]["value"] for r in late} == pytest.approx(
        {"model-a": 0.0, "model-b": 1.0}
    )
    assert [r["model"] for r in client.get(url, {"model": "MODEL-A"}).json()] == ["model-a"]
    ascending = client.get(url, {"sort": "model", "dir": "asc"}).json()
    assert [r["model"] for r in ascending] == ["model-a", "model-b"]
    by_hard = client.get(url, {"sort": "d:hard"}).json()
    assert [r["model"] for r in by_hard] == ["model-b", "model-a"]
    # Bad controls are refused as JSON, never a server error.
    for bad in ({"after": "not a date"}, {"dir": "sideways"}, {"model": "x" * 201}):
        response = client.get(url, bad)
        assert response.status_code == 422 and response["Content-Type"].startswith(
            "application/json"
        )
