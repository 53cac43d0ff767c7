"""A real Chromium opens a campaign's trajectory heatmap, hovers an accepted cell, reads the
candidate's idea in the tooltip, clicks through to the candidate page, and opens the analytics
page. Screenshots go to test-artifacts/ (gitignored)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from accounts.services import user_create
from tests.support.browser import LAUNCH, assert_light_plotly, log_in

from .data import build_campaign

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ARTIFACTS = Path(__file__).resolve().parents[4] / "test-artifacts"


def _cell_center(page, x: int, y: int) -> tuple[float, float]:
    """Page coordinates of heatmap cell (column x, row y), from plotly's own axis mapping."""
    return tuple(
        page.evaluate(
            """([x, y]) => {
                const gd = document.getElementById('heatmap');
                const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
                const box = gd.querySelector('.nsewdrag').getBoundingClientRect();
                return [box.left + xa.l2p(x), box.top + ya.l2p(y)];
            }""",
            [x, y],
        )
    )


def test_curator_hovers_a_heatmap_cell_and_clicks_through_to_the_candidate(
    live_server, transactional_db
):
    built = build_campaign(seeds=8, rounds=6, rng_seed=21, name="Browser campaign")
    user_create(username="cory", password="cory-password-1", role="curator")
    lineage_index, cell = next(
        (i, c)
        for i, lin in enumerate(built.lineages)
        for c in sorted(built.candidates, key=lambda c: c.round)
        if c.lineage_id == lin.pk and c.decision == "accepted"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    base = live_server.url
    heatmap_url = f"/campaigns/{built.campaign.pk}/heatmap/"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**LAUNCH)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        console_errors = []
        page.on("pageerror", lambda exc: console_errors.append(str(exc)))
        log_in(page, base, "cory", "cory-password-1", next_url=heatmap_url)
        page.wait_for_selector("#heatmap[data-ready='1']", timeout=20_000)
        assert_light_plotly(page)
        expect(page.locator("#heatmap-status")).to_contain_text("Seeds 1–8 of 8")
        # One heatmap row per seed, with the seed's label on the axis.
        expect(page.locator("#heatmap g.ytick text").first).to_contain_text(
            built.lineages[0].seed.title
        )
        page.screenshot(path=str(ARTIFACTS / "heatmap.png"), full_page=True)

        x, y = _cell_center(page, cell.round, lineage_index)
        page.mouse.move(x, y)
        hover = page.locator(".hoverlayer .hovertext")
        expect(hover).to_contain_text(f"R{cell.round} · accepted")
        expect(hover).to_contain_text(cell.idea.split(",")[0][:30])
        expect(hover).to_contain_text(f"{cell.passes}/{cell.attempts}")
        page.screenshot(path=str(ARTIFACTS / "heatmap-hover.png"))

        page.mouse.click(x, y)
        page.wait_for_url(re.compile(rf"/candidates/{cell.pk}/$"))
        expect(page.locator("h1")).to_contain_text(f"Round {cell.round}")
        expect(page.locator("#decision")).to_contain_text("accepted")

        # Filtering re-draws only the matching seeds and keeps the filter in the URL.
        page.goto(f"{base}{heatmap_url}?difficulty=hard")
        page.wait_for_selector("#heatmap[data-ready='1']")
        hard = sum(1 for lin in built.lineages if lin.seed.origin_difficulty == "hard")
        expect(page.locator("#heatmap-status")).to_contain_text(f"of {hard} matching")

        page.goto(f"{base}/campaigns/{built.campaign.pk}/analytics/")
        for name in ("pass_rates", "funnel", "cost", "families"):
            expect(page.locator(f"[data-chart='{name}'] .main-svg").first).to_be_visible(
                timeout=20_000
            )
        assert_light_plotly(page)
        # The funnel is drawn as horizontal bars (the cartesian bundle has no funnel trace).
        expect(page.locator("[data-chart='funnel'] .barlayer .point").first).to_be_visible()
        expect(page.locator("[data-chart='categories']")).to_contain_text("No reviewed tags yet")
        page.screenshot(path=str(ARTIFACTS / "analytics.png"), full_page=True)
        browser.close()
    assert console_errors == []
    assert (ARTIFACTS / "heatmap.png").stat().st_size > 10_000
