"""Real Chromium on the public leaderboard: the date slider changes the scores and the rows,
a column header sorts, the model filter keeps the matching models, and the chart draws one
bar with its interval per model shown."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.browser import assert_light_plotly, chromium_page

from .board_world import board_world

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# With BENCHFORGE_SCREENSHOTS=1 the test also saves the README's screenshot of this page.
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "img"


def _rows(page) -> list[str]:
    return page.locator("#leaderboard tbody tr[data-model]").evaluate_all(
        "rows => rows.map(r => r.dataset.model)"
    )


def _pass1(page, model: str) -> str:
    return page.locator(f'tr[data-model="{model}"] td.pass1 b').inner_text()


def test_a_visitor_windows_sorts_filters_and_reads_the_chart(live_server, settings):
    settings.PUBLIC_PAGE_CACHE_SECONDS = 0
    world = board_world()
    with chromium_page() as page:
        page.goto(live_server.url + world.url)
        # Every problem: model-b 66.7%, model-a 50.0%.
        assert _rows(page) == ["model-b", "model-a"]
        assert _pass1(page, "model-b") == "66.7%" and _pass1(page, "model-a") == "50.0%"
        chart = page.locator("#leaderboard-chart")
        expect(chart.locator(".main-svg").first).to_be_visible()
        assert_light_plotly(page)
        expect(chart.locator("g.point")).to_have_count(2)
        expect(chart.locator("g.errorbar")).to_have_count(2)
        expect(chart.locator(".xtitle")).to_have_text("pass@1 (%), 95% bootstrap interval")
        ticks = chart.locator(".xtick text").evaluate_all("ts => ts.map(t => t.textContent)")
        assert ticks[:3] == ["0", "10", "20"]
        if os.environ.get("BENCHFORGE_SCREENSHOTS") == "1":
            page.screenshot(path=str(SCREENSHOTS / "leaderboard.png"), full_page=True)

        # The slider: one step per problem date; the last keeps only E-OVERRIDE (2024-06-01).
        slider = page.locator("#after-range")
        slider.focus()
        page.keyboard.press("End")
        expect(page.locator("#after-label")).to_have_text("2024-06-01")
        page.wait_for_url(re.compile(r"after=2024-06-01"))
        expect(page.locator("#window-count")).to_contain_text("1 of 3 problems in view")
        assert _rows(page) == ["model-b", "model-a"]
        assert _pass1(page, "model-b") == "100.0%" and _pass1(page, "model-a") == "0.0%"
        # One step back (2024-01-10): E-OK and E-OVERRIDE, 50% each.
        page.locator("#after-range").focus()
        page.keyboard.press("ArrowLeft")
        page.wait_for_url(re.compile(r"after=2024-01-10"))
        assert _pass1(page, "model-b") == "50.0%" and _pass1(page, "model-a") == "50.0%"

        # Sorting by a column header keeps the window.
        page.click('#leaderboard th[data-sort="model"] a')
        page.wait_for_url(re.compile(r"sort=model"))
        assert "after=2024-01-10" in page.url
        assert _rows(page) == ["model-a", "model-b"]
        expect(page.locator('th[data-sort="model"]')).to_have_attribute("aria-sort", "ascending")
        page.click('#leaderboard th[data-sort="model"] a')
        page.wait_for_url(re.compile(r"dir=desc"))
        assert _rows(page) == ["model-b", "model-a"]

        # The model filter.
        page.fill("#model-filter", "model-a")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"model=model-a"))
        assert _rows(page) == ["model-a"]
        expect(page.locator("#leaderboard-chart g.point")).to_have_count(1)
        row = page.locator('tr[data-model="model-a"]')
        expect(row.locator("td.released")).to_have_text("2024-03-01")

        # A model without a release date says so.
        page.click("#reset-controls")
        expect(page.locator('tr[data-model="model-b"] td.released')).to_have_text(
            "release date unknown"
        )
        expect(page.locator('tr[data-model="model-b"] td.clean')).to_have_text(
            "needs the model's release date"
        )
