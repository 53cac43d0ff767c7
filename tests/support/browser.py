"""Real Chromium for browser tests (Debian's, never a downloaded one)."""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import sync_playwright

LAUNCH = {
    "executable_path": "/usr/bin/chromium",
    "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
}


@contextmanager
def chromium_page(width: int = 1280, height: int = 900):
    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls are
    # still synchronous, so Django's async-safety guard is lifted for the test's duration.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**LAUNCH)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            yield page
        finally:
            browser.close()


# With BENCHFORGE_SCREENSHOTS=1 browser tests also save the docs' screenshots of their pages.
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "img"


def docs_screenshot(page, name: str, *, full_page: bool = False) -> None:
    """Saves the page (from its top) as ``docs/img/<name>`` when screenshots are asked for."""
    if os.environ.get("BENCHFORGE_SCREENSHOTS") == "1":
        page.evaluate("() => window.scrollTo(0, 0)")
        page.screenshot(path=str(SCREENSHOTS / name), full_page=full_page)


def log_in(page, base_url: str, username: str, password: str, next_url: str = "/") -> None:
    page.goto(f"{base_url}/accounts/login/?next={next_url}")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(re.escape(next_url) + "$"))


def plotly_bundles(page) -> list[str]:
    """The plotly.js files the page downloaded (their paths), once it has drawn its charts:
    the chart pages load the cartesian partial bundle (``{% plotly_script %}``), never the
    whole plotly.js."""
    return page.evaluate(
        """() => performance.getEntriesByType("resource")
            .map(e => new URL(e.name).pathname)
            .filter(p => p.startsWith("/assets/plotly-"))"""
    )


def assert_light_plotly(page) -> None:
    bundles = plotly_bundles(page)
    assert len(bundles) == 1 and bundles[0].startswith("/assets/plotly-cartesian-"), bundles
    assert page.evaluate("typeof window.Plotly.newPlot") == "function"
