"""``bench_chart_pages`` measures what it says: one cold load of the public leaderboard in
Chromium with each plotly.js bundle gives the navigation's DOMContentLoaded, the moment the
chart is drawn and the bytes transferred, the whole plotly.js (the baseline) three times the
cartesian bundle's on the wire."""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import sync_playwright

from bench import bench_chart_pages
from tests.releases.board_world import board_world
from tests.support.browser import LAUNCH

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_one_cold_load_per_bundle_is_measured(live_server):
    world = board_world()
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    drawn = bench_chart_pages.DRAWN["leaderboard"]
    got = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**LAUNCH)
        try:
            for variant in ("cartesian", "full"):
                with bench_chart_pages._bundle(variant):
                    got[variant] = bench_chart_pages._load(
                        browser, live_server.url, world.url, drawn, ""
                    )
        finally:
            browser.close()
    light, full = got["cartesian"], got["full"]
    for m in (light, full):
        assert 0 < m["dcl"] <= m["charts"], m
        assert m["decoded"] > m["transferred"] > 0, m  # the bundle came gzipped
        assert len(m["plotly"]) == 1, m
    assert full["plotly"][0] > 2.5 * light["plotly"][0]
    assert light["plotly"][0] < 600_000 < 1_200_000 < full["plotly"][0]
    assert full["transferred"] - light["transferred"] > 900_000
