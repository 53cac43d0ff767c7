"""Pages with charts in Chromium, cold: DOMContentLoaded, charts drawn and bytes transferred,
with plotly.js's cartesian bundle loaded async (what the pages load) against the whole
plotly.js loaded before the page's scripts (what they loaded before), in the same run.

Four pages: a campaign's trajectory heatmap and analytics (a finished campaign of 200 seeds x
10 rounds, factory data), a reasoning campaign's type x difficulty matrix with its EMA charts
(3 types x 4 levels x 3 runs, run inline against the loopback model server) and the public
leaderboard (five models, every column; signed out, with the public page cache off so that
each variant gets its own HTML). They are served by Django in this process (the
WSGI server of the live-server tests: static files from WhiteNoise, the bundle from its own
view, gzipped), from a throwaway database, to Debian's Chromium at 1366 x 900.

"Cold" is a new browser context for every load: an empty HTTP cache and no compiled-code
cache, as a first visit. Each page is loaded once per variant first, unmeasured, so the
server's caches (chart data, the public page cache) are warm for both; then the variants
alternate, ``REPEATS`` loads each, and the table gives medians:

- DOMContentLoaded: ``domContentLoadedEventEnd`` of the navigation, from its start.
- charts drawn: when the page's charts are all in the DOM (polled every animation frame).
- transferred: what came over the wire for the page and everything it loaded (Resource
  Timing's ``transferSize``: headers and compressed bodies), the charts' data included;
  decoded: the same bodies uncompressed.

The baseline is ``settings.PLOTLY_BUNDLE = "full"``: the same pages with the whole plotly.js of
the plotly package (4.8 MB) as a blocking script, as before (plus the 1 KB plotly_ready.js the
pages' scripts now wait on). The targets from issue #33: DOMContentLoaded under 1 s and under
1 MB transferred for each page.
"""

from __future__ import annotations

import os
import statistics
import time

NAME = "Chart pages, cold in Chromium (bench_chart_pages)"
REPEATS = 7
QUICK_REPEATS = 3
TARGET_DCL_MS = 1000.0
TARGET_BYTES = 1_000_000
WIDTH, HEIGHT = 1366, 900

# When each page's charts are drawn (all of them, not only the first).
DRAWN = {
    "heatmap": "document.querySelector('#heatmap[data-ready=\"1\"] .main-svg')",
    "analytics": "document.querySelectorAll('[data-chart][aria-busy=\"true\"]').length === 0"
    " && document.querySelectorAll('[data-chart] .main-svg').length >= 4",
    "reasoning matrix": "document.querySelector('#matrix-heatmap[data-rendered=\"1\"]')"
    " && document.querySelector('#ema-by-difficulty .main-svg')",
    "leaderboard": "document.querySelector('#leaderboard-chart .main-svg')",
}

METRICS = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const all = [nav, ...performance.getEntriesByType("resource")];
  return {
    dcl: nav.domContentLoadedEventEnd,
    transferred: all.reduce((s, e) => s + e.transferSize, 0),
    decoded: all.reduce((s, e) => s + e.decodedBodySize, 0),
    plotly: all.filter(e => e.name.includes("/assets/plotly-")).map(e => e.transferSize),
  };
}"""


def _pages(quick: bool) -> tuple[dict[str, str], str]:
    """Build the four pages' data; their paths, and a curator's session cookie."""
    from django.test import Client
    from django.urls import reverse

    from accounts.services import user_create
    from evolution.streams.runner import run_inline
    from tests.evolution.benchevolver.analytics.data import build_campaign
    from tests.reasoning.conftest import World, make_campaign
    from tests.releases.board_world import wide_board_world
    from tests.support.fake_openai import FakeOpenAI

    started = time.perf_counter()
    seeds = 40 if quick else 200
    built = build_campaign(
        seeds=seeds,
        rounds=10,
        rng_seed=42,
        full_rounds=True,
        candidate_attempts=True,
        calls_per_candidate=4,
        tag="charts",
    )
    with FakeOpenAI() as server:
        world = World()
        world.verdicts = [True, False, True, True, False, False] * 20
        server.responder = world
        types = [
            {"name": "logical_deduction", "description": "logic"},
            {"name": "data_interpretation", "description": "tables"},
            {"name": "spatial_reasoning", "description": "shapes"},
        ]
        campaign = make_campaign(server, reasoning_types=types, difficulty_end=4, runs=3)
        run_inline(campaign_id=campaign.pk)
    board = wide_board_world()
    user = user_create(username="bench-charts", password="bench-password-1", role="curator")
    client = Client()
    client.force_login(user)
    print(
        f"built a {seeds}-seed campaign, a reasoning campaign and a leaderboard "
        f"in {time.perf_counter() - started:.1f} s"
    )
    pk = built.campaign.pk
    pages = {
        "heatmap": reverse("evolution:campaign_heatmap", args=[pk]),
        "analytics": reverse("evolution:campaign_analytics", args=[pk]),
        "reasoning matrix": reverse("reasoning:campaign_detail", args=[campaign.pk]),
        "leaderboard": board.url,
    }
    return pages, client.cookies["sessionid"].value


def _load(browser, base: str, path: str, drawn: str, session: str) -> dict:
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        if session:
            context.add_cookies([{"name": "sessionid", "value": session, "url": base}])
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(base + path, wait_until="domcontentloaded", timeout=120_000)
        handle = page.wait_for_function(
            f"() => ({drawn}) ? performance.now() : false", polling="raf", timeout=120_000
        )
        charts = handle.json_value()
        page.wait_for_load_state("networkidle")
        metrics = page.evaluate(METRICS)
        if errors:
            raise RuntimeError(f"{path}: {errors}")
        return {**metrics, "charts": charts}
    finally:
        context.close()


def _serve():
    """The project's WSGI application on a free loopback port, in a thread of this process."""
    from django.test.testcases import LiveServerThread

    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # Playwright's sync API runs a loop here
    thread = LiveServerThread("127.0.0.1", static_handler=lambda app: app, port=0)
    thread.daemon = True
    thread.start()
    thread.is_ready.wait()
    if thread.error:
        raise thread.error
    return thread, f"http://127.0.0.1:{thread.port}"


def _bundle(variant: str):
    """The pages with this plotly.js; the public page cache off, so that each variant's
    leaderboard is its own HTML (its data stays cached: releases.leaderboard.board)."""
    from django.test import override_settings

    return override_settings(PLOTLY_BUNDLE=variant, PUBLIC_PAGE_CACHE_SECONDS=0)


def _kib(n: float) -> float:
    return round(n / 1024, 1)


def run(args) -> list[dict]:
    from django.core.cache import cache
    from playwright.sync_api import sync_playwright

    from bench.support import throwaway_database
    from tests.support.browser import LAUNCH

    quick = bool(getattr(args, "quick", False))
    repeats = QUICK_REPEATS if quick else REPEATS
    variants = {"cartesian": "cartesian, async", "full": "whole plotly.js, blocking (before)"}
    with throwaway_database("charts"):
        pages, session = _pages(quick)
        thread, base = _serve()
        samples = {(p, v): [] for p in pages for v in variants}
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(**LAUNCH)
                try:
                    for name, path in pages.items():
                        cache.clear()
                        # The leaderboard as a visitor sees it (signed out).
                        who = "" if name == "leaderboard" else session
                        for variant in variants:  # warm the server's caches, unmeasured
                            with _bundle(variant):
                                _load(browser, base, path, DRAWN[name], who)
                        for _ in range(repeats):
                            for variant in variants:
                                with _bundle(variant):
                                    samples[name, variant].append(
                                        _load(browser, base, path, DRAWN[name], who)
                                    )
                        for variant in variants:
                            got = samples[name, variant]
                            print(
                                f"{name}, {variant}: DOMContentLoaded "
                                f"{sorted(round(s['dcl']) for s in got)} ms, "
                                f"{round(statistics.median(s['transferred'] for s in got))} B"
                            )
                finally:
                    browser.close()
        finally:
            thread.terminate()
    rows = []
    for name in pages:

        def median(key, variant, name=name):
            return statistics.median(s[key] for s in samples[name, variant])

        dcl, dcl_before = median("dcl", "cartesian"), median("dcl", "full")
        sent, sent_before = median("transferred", "cartesian"), median("transferred", "full")
        rows.append(
            {
                "page": name,
                "DCL (ms)": round(dcl),
                "DCL before (ms)": round(dcl_before),
                "DCL ratio": round(dcl / dcl_before, 3),
                "charts drawn (ms)": round(median("charts", "cartesian")),
                "drawn before (ms)": round(median("charts", "full")),
                "sent (KiB)": _kib(sent),
                "sent before (KiB)": _kib(sent_before),
                "decoded (KiB)": _kib(median("decoded", "cartesian")),
                "decoded before (KiB)": _kib(median("decoded", "full")),
                "target": "DCL < 1000 ms, sent < 1 MB",
                "ok": "yes" if dcl < TARGET_DCL_MS and sent < TARGET_BYTES else "NO",
            }
        )
    print(f"(medians of {repeats} cold loads per page and variant, alternating)")
    return rows
