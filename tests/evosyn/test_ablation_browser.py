"""A real Chromium draws the ablation's charts on the campaign page: the consistency score per
M x N, one line per K with and one without Criterion-1 (Table 1), and the usable synthesized
problems per M x N (Figure 4b), from the light plotly bundle loaded async."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from accounts.services import user_create
from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline
from evosyn import services
from evosyn.ablation import ablation_run
from tests.support.answers import fenced
from tests.support.browser import assert_light_plotly, chromium_page, log_in

from .helpers import CRASHING, FIGURE_3, SMALL_SETTINGS, respond, script

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_the_ablation_charts_render_in_chromium(live_server, world, fake_server):
    seed_set, endpoint = world
    respond(fake_server, script(strategist=[fenced(CRASHING), fenced(FIGURE_3)]))
    campaign = services.evosyn_campaign_create(
        name="evosyn ablation browser",
        seed_set=seed_set,
        endpoint=endpoint,
        settings=SMALL_SETTINGS,
    )
    campaign_services.campaign_launch(campaign_id=campaign.pk)
    run_inline(campaign_id=campaign.pk, max_steps=120)
    ablation_run(campaign_id=campaign.pk, m_values=[2, 4], n_values=[3, 4], k_values=[1, 2])
    user_create(username="ablation_curator", password="ablation-password-1", role="curator")

    with chromium_page() as page:
        errors = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        url = f"/evosyn/{campaign.pk}/"
        log_in(page, live_server.url, "ablation_curator", "ablation-password-1", url)
        chart = page.locator("#ablation-consistency")
        expect(chart).to_have_attribute("data-rendered", "1", timeout=20000)
        # Two K values, each with and without Criterion-1: four lines over four (M, N) pairs.
        expect(chart.locator(".scatterlayer .trace")).to_have_count(4)
        expect(chart.locator(".xtick text", has_text="M=4 N=4")).to_have_count(1)
        expect(chart.locator(".legendtext", has_text="K = 2, Criterion-2 only")).to_have_count(1)
        usable = page.locator("#ablation-usable")
        expect(usable).to_have_attribute("data-rendered", "1", timeout=20000)
        expect(usable.locator(".barlayer .trace")).to_have_count(1)
        assert_light_plotly(page)
        # The cell table says which cells were not computed, and why: K = 2 of M = 2 (N = 3, 4).
        expect(page.locator("#ablation-cells td", has_text="overlap")).to_have_count(2)
        assert errors == []
