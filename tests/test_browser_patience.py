"""Browser tests wait as long as a loaded machine needs (tests/conftest.py): expect() waits past
Playwright's own 5 s, and every page, opened from a browser or from a context, gets the patient
navigation and action timeouts."""

from __future__ import annotations

import pytest

from tests.support.browser import LAUNCH


@pytest.mark.browser
def test_expect_waits_past_five_seconds_and_every_way_of_opening_a_page_is_patient():
    from playwright.sync_api import Browser, BrowserContext, expect, sync_playwright

    assert Browser.new_page.patient and BrowserContext.new_page.patient
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**LAUNCH)
        try:
            page = browser.new_context().new_page()
            page.set_content(
                "<p id=late></p><script>setTimeout(() =>"
                " document.getElementById('late').textContent = 'here', 6000)</script>"
            )
            expect(page.locator("#late")).to_have_text("here")  # appears after 6 s
        finally:
            browser.close()
