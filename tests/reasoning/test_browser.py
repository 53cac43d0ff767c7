"""A real Chromium renders the type x difficulty heatmap and the EMA charts of a campaign."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect, sync_playwright

from accounts.services import user_create
from evolution.streams.runner import run_inline
from reasoning.models import ReasoningCampaign
from tests.support.browser import assert_light_plotly

from .helpers import World, make_campaign

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

LAUNCH = {
    "executable_path": "/usr/bin/chromium",
    "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
}


def test_the_matrix_heatmap_and_ema_charts_render_in_chromium(live_server, fake_server):
    world = World()
    world.verdicts = [True, False, True, True, False, False] * 2
    fake_server.responder = world
    types = [
        {"name": "logical_deduction", "description": "logic"},
        {"name": "data_interpretation", "description": "tables"},
    ]
    campaign = make_campaign(fake_server, reasoning_types=types, difficulty_end=3, runs=2)
    run_inline(campaign_id=campaign.pk)
    series_slug = ReasoningCampaign.objects.get(pk=campaign.pk).series.slug
    user_create(username="heat_curator", password="heat-password-1", role="curator")

    with sync_playwright() as p:
        browser = p.chromium.launch(**LAUNCH)
        try:
            page = browser.new_page()
            errors = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{live_server.url}/login/?next=/reasoning/{campaign.pk}/")
            page.fill("input[name=username]", "heat_curator")
            page.fill("input[name=password]", "heat-password-1")
            page.click("button[type=submit], input[type=submit]")
            page.wait_for_url(f"**/reasoning/{campaign.pk}/")
            heatmap = page.locator("#matrix-heatmap")
            expect(heatmap).to_have_attribute("data-rendered", "1", timeout=15000)
            # Plotly drew the heatmap: its SVG, one row label per type, the cell texts.
            expect(heatmap.locator(".main-svg").first).to_be_visible()
            assert_light_plotly(page)
            expect(heatmap.locator(".ytick text", has_text="logical_deduction")).to_have_count(1)
            expect(heatmap.locator(".ytick text", has_text="data_interpretation")).to_have_count(1)
            expect(heatmap.locator(".xtick text")).to_have_count(3)
            cell_texts = heatmap.locator("text", has_text="(2)").all_inner_texts()
            assert len(cell_texts) == 6  # 2 types x 3 difficulties, 2 scored items each
            # The EMA charts: overall (EMA and run score) over the two runs.
            overall = page.locator("#ema-overall")
            expect(overall.locator(".scatterlayer .trace")).to_have_count(2)
            expect(page.locator("#ema-by-type .scatterlayer .trace")).to_have_count(2)
            # The series' chart: its EMA and run scores over every campaign's runs.
            expect(page.locator("#ema-series .scatterlayer .trace")).to_have_count(2)
            # Choosing one run redraws the matrix with that run's items only.
            page.select_option("#matrix-run", "1")
            expect(heatmap.locator("text", has_text="(1)")).to_have_count(6, timeout=10000)
            # The series page draws the same EMA over the series' runs.
            page.goto(f"{live_server.url}/reasoning/series/{series_slug}/")
            chart = page.locator("#series-ema-chart")
            expect(chart).to_have_attribute("data-rendered", "1", timeout=15000)
            expect(chart.locator(".scatterlayer .trace")).to_have_count(2)
            expect(chart.locator(".scatterlayer .trace .point")).to_have_count(4)  # 2 runs x 2
            assert errors == []
        finally:
            browser.close()
