"""Real Chromium: a curator walks the living-benchmark page of a re-measured release (the
saturation plot, the re-measurements, re-evolving the saturated problems), a problem's
difficulty history and a campaign's calibration plot, sending the disagreements to
adjudication. The plots are drawn by plotly.js (hovering shows the figures); without
JavaScript the inline SVG stays. Screenshots go to docs/img/."""

from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from accounts.services import user_create
from evolution.models import Campaign
from review.models import Adjudication
from tests.support.browser import SCREENSHOTS, chromium_page, docs_screenshot, log_in

from .living_support import remeasured_release
from .test_living_calibration import author_of


def _hover(page, point) -> None:
    """Move the mouse onto a plotly marker (plotly's drag layer takes the pointer events)."""
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


@pytest.mark.browser
@pytest.mark.slow
def test_a_curator_walks_the_living_page_and_the_calibration_plot(transactional_db, live_server):
    world, release = remeasured_release()
    author_of(world)
    user_create(username="cora", password="cora-password-1", role="curator")
    slug = release.benchmark.slug
    with chromium_page() as page:
        log_in(page, live_server.url, "cora", "cora-password-1", f"/benchmarks/{slug}/living/")
        expect(page.locator("#living-releases")).to_contain_text("v1.0.0")
        expect(page.locator("#living-releases")).to_contain_text("2 (67%)")
        expect(page.locator("tr.remeasurement")).to_have_count(2)
        expect(page.locator("circle.saturation-point")).to_have_count(2)  # the SVG fallback
        chart = page.locator("#saturation-chart")
        expect(chart).to_have_attribute("data-rendered", "1")
        expect(chart.locator(".scatterlayer .point")).to_have_count(2)
        expect(chart).to_contain_text("share of the release saturated")
        expect(page.locator("#living-saturation .plot-fallback")).to_be_hidden()
        _hover(page, chart.locator(".scatterlayer .point").nth(1))
        expect(chart.locator(".hoverlayer")).to_contain_text("2 of 3")
        expect(page.locator("tr.saturation-flag")).to_have_count(2)
        expect(page.locator("tr.saturation-flag").first).to_contain_text("strong")
        page.click("text=Re-evolve saturated problems")
        expect(page.locator("p.reevolution")).to_contain_text("Re-evolve")
        expect(page.locator("p.reevolution")).to_contain_text("draft")
        docs_screenshot(page, "living.png", full_page=True)
        # The curator narrows the draft to E-OK and launches it from this page.
        draft = page.locator("div.reevolution-draft")
        expect(draft.locator("input[name=retired]")).to_have_count(2)
        draft.locator(f"input[value='{world.problem('E-OVERRIDE').public_id}']").uncheck()
        draft.locator("input[name=budget_max_calls]").fill("200")
        draft.locator("text=Save and launch").click()
        expect(page.locator("ul.messages")).to_contain_text("launched.")
        expect(page.locator("p.reevolution")).to_contain_text("queued")
        expect(page.locator("div.reevolution-draft")).to_have_count(0)

        pid = world.problem("E-OK").public_id
        page.goto(f"{live_server.url}/releases/{slug}/v{release.version}/items/{pid}/")
        expect(page.locator("#difficulty-history circle.history-point")).to_have_count(2)
        expect(page.locator("#difficulty-history")).to_contain_text("saturated")
        history = page.locator("#history-chart")
        expect(history).to_have_attribute("data-rendered", "1")
        expect(history.locator(".scatterlayer .point")).to_have_count(2)
        expect(history).to_contain_text("pass@1 over the panel")
        expect(history).to_contain_text("saturation bound 0.75")
        _hover(page, history.locator(".scatterlayer .point").nth(1))
        expect(history.locator(".hoverlayer")).to_contain_text("7 of 8 samples")
        if os.environ.get("BENCHFORGE_SCREENSHOTS") == "1":
            page.locator("#difficulty-history").screenshot(
                path=str(SCREENSHOTS / "living-history.png")
            )

        page.goto(f"{live_server.url}/curate/campaigns/{world.campaign.pk}/calibration/")
        expect(page.locator("#calibration-rho")).to_contain_text("over 8 problems")
        expect(page.locator("circle.calibration-point")).to_have_count(8)
        expect(page.locator("circle.calibration-point.flagged")).to_have_count(2)
        scatter = page.locator("#calibration-chart")
        expect(scatter).to_have_attribute("data-rendered", "1")
        expect(scatter.locator(".scatterlayer .point")).to_have_count(8)
        expect(scatter.locator(".scatterlayer .trace").nth(1).locator(".point")).to_have_count(2)
        expect(scatter).to_contain_text("experts' difficulty (1 easy to 5 hard)")
        expect(scatter).to_contain_text("panel pass@1")
        expect(page.locator("tr.disagreement")).to_have_count(2)
        expect(page.locator("tr.disagreement").first).to_contain_text("model-only hardness")
        docs_screenshot(page, "living-calibration.png", full_page=True)
        page.click("text=Send to the adjudication queue")
        expect(page.locator("body")).to_contain_text("2 disagreement(s) sent to the adjudication")
        assert re.search(r"/calibration/$", page.url)

        # Without JavaScript the problem page keeps its inline SVG plot.
        context = page.context.browser.new_context(java_script_enabled=False)
        try:
            bare = context.new_page()
            bare.goto(f"{live_server.url}/releases/{slug}/v{release.version}/items/{pid}/")
            expect(bare.locator("#difficulty-history .plot-fallback")).to_be_visible()
            expect(bare.locator("#difficulty-history circle.history-point")).to_have_count(2)
            expect(bare.locator("#history-chart")).to_be_hidden()
        finally:
            context.close()
    assert Adjudication.objects.filter(dimension="calibration").count() == 2
    (launched,) = Campaign.objects.filter(reevolution__release=release)
    assert (launched.state, launched.budget_max_calls) == ("queued", 200)
    assert list(launched.seed_set.problems.all()) == [world.problem("E-OK")]
