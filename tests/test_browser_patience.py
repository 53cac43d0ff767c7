"""Browser tests wait as long as a loaded machine needs (tests/conftest.py): expect() waits past
Playwright's own 5 s, and every page, opened from a browser or from a context, gets the patient
navigation and action timeouts."""

from __future__ import annotations

import pytest

from tests.support.browser import LAUNCH
from tests.support.workers import other_sessions, wait_for


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


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_orm_calls_a_browser_test_makes_leave_no_connection_open(monkeypatch):
    """Inside Playwright's sync API an event loop is marked running in the test's thread, so
    Django keeps the connections the test opens there apart from the thread's own (asgiref's
    thread-critical Local becomes a context variable) and never closes them: every browser test
    that touched the ORM left a session on the test database, and the run ended with "could not
    drop test databases ... being accessed by other users"."""
    from playwright.sync_api import sync_playwright

    from evolution.models import Campaign

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # as tests/support/browser.py does
    # A session that is ending leaves pg_stat_activity a moment after its connection closes.
    wait_for(lambda: other_sessions() == 0, 10, "no other session on the test database")
    with sync_playwright():
        assert Campaign.objects.count() == 0  # a connection of the browser block's own
    wait_for(lambda: other_sessions() == 0, 10, "the browser block's connection closed")
