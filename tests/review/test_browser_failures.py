"""A real Chromium on the failure paths of the review form and the live campaign page: the
session ends mid-edit, a save is refused or cannot reach the server, the reviewer leaves with
unsaved text, a submit is refused. In each case the page stays intact, says what happened and
keeps the reviewer's text until the server has it."""

from __future__ import annotations

import os
from contextlib import contextmanager

import pytest
from playwright.sync_api import expect, sync_playwright

from evolution.models.campaigns import CampaignState
from review import services
from review.models import Assignment, Review
from tests.factories import CampaignFactory
from tests.support.browser import LAUNCH, docs_screenshot, log_in

from .conftest import answers
from .factories import lineage_with_problems

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@contextmanager
def chromium_page():
    """A page in its own browser context, so a second tab (``page.context.new_page()``)
    shares its cookies: logging out there ends this page's session too."""
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**LAUNCH)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            yield context.new_page()
        finally:
            browser.close()


def _assignment(personas, n_evolved: int = 1) -> Assignment:
    lineage, _ = lineage_with_problems(n_evolved=n_evolved, tag="fail")
    services.round_create(
        name="failure round",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user],
        lineages=[lineage],
    )
    return Assignment.objects.get(reviewer=personas.reviewer_a.user)


def _open_group(page, base: str, personas, assignment: Assignment) -> str:
    url = f"/review/g/{assignment.opaque_id}/"
    log_in(page, base, "rae_reviewer", personas.reviewer_a.password, url)
    return page.locator("section.problem:not(.hidden)").get_attribute("data-item")


def _kept(page, assignment: Assignment) -> list[str]:
    """The copies of the group's answers this browser keeps (one per tab)."""
    return page.evaluate(
        """(g) => Object.keys(localStorage)
              .filter((k) => k.startsWith(`benchforge:review-draft:${g}:`))
              .map((k) => localStorage.getItem(k))""",
        assignment.opaque_id,
    )


def _log_out(page, base: str) -> None:
    page.goto(f"{base}/")
    page.locator(".who button", has_text="Log out").click()
    page.wait_for_load_state()


def test_a_session_lost_during_autosave_keeps_the_page_and_saves_after_re_login(
    live_server, personas
):
    a = _assignment(personas)
    base = live_server.url
    with chromium_page() as page:
        item = _open_group(page, base, personas, a)
        status = page.locator("#save-status")
        box = page.locator(f'textarea[name="{item}-justification"]')
        box.fill("First thoughts.")
        expect(status).to_have_text("Draft saved", timeout=10_000)

        other = page.context.new_page()  # another tab of the same browser
        _log_out(other, base)

        box.fill("First thoughts. Written after the logout.")
        expect(status).to_contain_text("Not saved: your session has ended", timeout=10_000)
        banner = page.locator("#session-banner")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text("Log in again")
        docs_screenshot(page, "review-session-lost.png")
        # The page is intact: no login form swapped in, both problems and the form still there.
        expect(page.locator("input[name=password]")).to_have_count(0)
        expect(page.locator("section.problem")).to_have_count(2)
        expect(box).to_have_value("First thoughts. Written after the logout.")
        kept = _kept(page, a)
        assert any("Written after the logout." in k for k in kept), kept
        review = Review.objects.get(assignment=a, item__opaque_id=item)
        assert review.justification == "First thoughts."

        log_in(other, base, "rae_reviewer", personas.reviewer_a.password, "/accounts/back/")
        # The review page notices the new login by itself and sends what it kept.
        expect(status).to_have_text("Draft saved", timeout=15_000)
        expect(banner).to_have_count(0)
        review.refresh_from_db()
        assert review.justification == "First thoughts. Written after the logout."
        assert _kept(page, a) == []


def test_failed_saves_say_not_saved_with_the_reason_and_keep_the_text(live_server, personas):
    a = _assignment(personas)
    base = live_server.url
    with chromium_page() as page:
        item = _open_group(page, base, personas, a)
        status = page.locator("#save-status")
        box = page.locator(f'textarea[name="{item}-justification"]')
        autosave = f"**/review/g/{a.opaque_id}/draft/"

        # The network is down.
        page.route(autosave, lambda route: route.abort())
        box.fill("Typed while offline.")
        expect(status).to_contain_text("Not saved: the server could not be reached")
        page.unroute(autosave)

        # The server fails.
        page.route(autosave, lambda route: route.fulfill(status=500, body="boom"))
        box.fill("Typed while the server fails.")
        expect(status).to_contain_text("Not saved: the server answered 500")
        expect(status).to_have_class("save-status error")
        page.unroute(autosave)

        # The next edit goes through; the indicator goes unsaved -> saving -> saved.
        page.evaluate(
            """() => {
              window.seen = [];
              const nav = document.querySelector(".problem-tabs");
              new MutationObserver(() => {
                const text = document.getElementById("save-status").textContent;
                if (window.seen[window.seen.length - 1] !== text) window.seen.push(text);
              }).observe(nav, { subtree: true, childList: true, characterData: true });
            }"""
        )
        box.fill("Typed when all is well.")
        expect(status).to_have_text("Draft saved", timeout=10_000)
        seen = page.evaluate("() => window.seen")
        assert seen[-3:] == ["Unsaved changes", "Saving…", "Draft saved"], seen

        # The group was submitted elsewhere (another tab): 409 with the server's reason.
        data = {"certify_no_ai": "on"}
        for review in a.reviews.select_related("item"):
            data.update(answers(review.item.opaque_id))
        assert services.assignment_submit(assignment=a, data=data).ok
        box.fill("Typed after the group was submitted.")
        expect(status).to_contain_text("Not saved: This group was already submitted.")
        expect(box).to_have_value("Typed after the group was submitted.")


def test_leaving_with_unsaved_text_asks_first(live_server, personas):
    a = _assignment(personas)
    base = live_server.url
    with chromium_page() as page:
        item = _open_group(page, base, personas, a)
        # Hold the save so the text is still unsaved when the reviewer leaves.
        page.route(f"**/review/g/{a.opaque_id}/draft/", lambda route: None)
        page.locator(f'textarea[name="{item}-justification"]').click()
        page.keyboard.type("Half a thought")
        dialogs = []
        page.on("dialog", lambda d: (dialogs.append(d.type), d.dismiss()))
        page.close(run_before_unload=True)
        page.wait_for_timeout(500)
        assert dialogs == ["beforeunload"]
        assert not page.is_closed()  # dismissing the warning kept the page


def test_a_refused_submit_opens_the_first_problem_with_errors_in_plain_words(live_server, personas):
    a = _assignment(personas, n_evolved=2)
    items = [r.item.opaque_id for r in a.reviews.select_related("item").order_by("position")]
    # The first problem is complete; the other two are not.
    services.assignment_save_draft(assignment=a, data=answers(items[0]))
    base = live_server.url
    with chromium_page() as page:
        _open_group(page, base, personas, a)
        page.keyboard.press("Control+Enter")
        expect(page.locator("p.error[role=alert]")).to_contain_text("need attention")
        shown = page.locator("section.problem:not(.hidden)")
        expect(shown).to_have_attribute("data-item", items[1])
        tabs = page.locator(".problem-tabs a")
        expect(tabs.nth(0)).not_to_have_class("has-error")
        expect(tabs.nth(1)).to_have_class("has-error active")
        expect(tabs.nth(2)).to_have_class("has-error")
        errors = shown.locator(".field-errors")
        expect(errors).to_contain_text("Codeforces rating estimate")
        expect(errors).to_contain_text("Justification")
        expect(errors).not_to_contain_text("cf_rating")
        docs_screenshot(page, "review-refused-submit.png")
        a.refresh_from_db()
        assert a.submitted_at is None


def test_the_live_campaign_page_survives_the_session_ending(live_server, personas):
    campaign = CampaignFactory(name="live campaign", state=CampaignState.RUNNING)
    base = live_server.url
    url = f"/campaigns/{campaign.pk}/"
    with chromium_page() as page:
        log_in(page, base, "cory_curator", personas.curator.password, url)
        heading = page.locator("h1").first
        expect(heading).to_contain_text("live campaign")
        other = page.context.new_page()
        _log_out(other, base)
        banner = page.locator("#session-banner")
        expect(banner).to_be_visible(timeout=10_000)  # the panel polls every 2 s
        expect(heading).to_contain_text("live campaign")
        expect(page.locator("#live")).to_be_visible()
        expect(page.locator("input[name=password]")).to_have_count(0)
        log_in(other, base, "cory_curator", personas.curator.password, "/accounts/back/")
        expect(banner).to_have_count(0, timeout=15_000)
