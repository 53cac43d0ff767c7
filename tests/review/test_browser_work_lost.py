"""A real Chromium on the ways a reviewer's work used to be lost (issue #33): two tabs or
windows on one group, a submit after the session ended, a submit sent twice, and saves the
server refuses, never answers or cannot be reached (with DEBUG on too). In each case the page
stays, says what happened, keeps the reviewer's copy in the browser until the server holds the
same content, and nothing a reviewer wrote is overwritten without their say."""

from __future__ import annotations

import os
import re
import threading
import time
from contextlib import contextmanager

import pytest
from playwright.sync_api import expect, sync_playwright

from review import services
from review.models import Assignment, Review
from tests.support.browser import LAUNCH, log_in

from .conftest import answers
from .factories import lineage_with_problems

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Short save timeout and retry delays, so a hung server and a dead network show in seconds.
FAST_TIMING = (
    "window.BenchForgeReviewTiming = {saveTimeoutMs: 2000, retryBaseMs: 500, retryMaxMs: 2000};"
)


@contextmanager
def chromium():
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**LAUNCH)
        try:
            yield browser
        finally:
            browser.close()


def _window(browser):
    """A browser window of its own (its own cookies and storage, like a second device)."""
    return browser.new_context(viewport={"width": 1280, "height": 900})


def _assignments(personas, groups: int = 1) -> list[Assignment]:
    lineages = [lineage_with_problems(n_evolved=1, tag=f"lost{i}")[0] for i in range(groups)]
    services.round_create(
        name="work-lost round",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user],
        lineages=lineages,
    )
    # The queue's order: the page opens the next unsubmitted group by opaque id.
    return sorted(
        Assignment.objects.filter(reviewer=personas.reviewer_a.user), key=lambda a: a.opaque_id
    )


def _complete(assignment: Assignment) -> None:
    """Every answer of the group filled in and certified, saved as a draft."""
    data = {"certify_no_ai": "on"}
    for review in assignment.reviews.select_related("item"):
        data.update(answers(review.item.opaque_id))
    services.assignment_save_draft(assignment=assignment, data=data)


def _url(assignment: Assignment) -> str:
    return f"/review/g/{assignment.opaque_id}/"


def _open(page, base: str, personas, assignment: Assignment, *, logged_in=False) -> str:
    if logged_in:
        page.goto(base + _url(assignment))
    else:
        log_in(page, base, "rae_reviewer", personas.reviewer_a.password, _url(assignment))
    expect(page.locator("#save-status")).to_be_visible()
    return page.locator("section.problem:not(.hidden)").get_attribute("data-item")


def _kept(page, assignment: Assignment) -> list[str]:
    """Every copy of this group's answers the browser keeps (each tab keeps its own)."""
    return page.evaluate(
        """(g) => Object.keys(localStorage)
              .filter((k) => k.startsWith(`benchforge:review-draft:${g}`))
              .map((k) => localStorage.getItem(k))""",
        assignment.opaque_id,
    )


def _review(assignment: Assignment, item: str) -> Review:
    return Review.objects.get(assignment=assignment, item__opaque_id=item)


def _until(page, condition, what: str, timeout: float = 20.0) -> None:
    """Wait for ``condition`` (polled; the page keeps running its event loop meanwhile)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        page.wait_for_timeout(100)


def _log_out(page, base: str) -> None:
    page.goto(f"{base}/")
    page.locator(".who button", has_text="Log out").click()
    page.wait_for_load_state()


def _leave_warning(page) -> list[str]:
    """Close the tab as a reviewer would; the dialogs it raised (the warning is dismissed)."""
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.type), d.dismiss()))
    page.close(run_before_unload=True)
    deadline = time.monotonic() + 5
    while not dialogs and not page.is_closed() and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    return dialogs


# --- 1. two tabs, two windows ---------------------------------------------------------------


def test_two_tabs_editing_different_answers_of_one_group_keep_both(live_server, personas):
    (a,) = _assignments(personas)
    base = live_server.url
    with chromium() as browser:
        context = _window(browser)
        one = context.new_page()
        item = _open(one, base, personas, a)
        two = context.new_page()  # a second tab of the same browser, opened at the same state
        _open(two, base, personas, a, logged_in=True)

        one.locator(f'input[name="{item}-clarity"][value="2"]').check()
        expect(one.locator("#save-status")).to_have_text("Draft saved", timeout=10_000)
        two.locator(f'textarea[name="{item}-justification"]').fill("Rewritten in tab two.")
        expect(two.locator("#save-status")).to_contain_text("Draft saved", timeout=10_000)
        # Tab one, opened before tab two's save, changes another answer.
        one.locator(f'input[name="{item}-novelty"][value="5"]').check()
        expect(one.locator("#save-status")).to_contain_text("Draft saved", timeout=10_000)

        _until(
            one,
            lambda: _review(a, item).novelty == 5,
            "tab one's novelty rating on the server",
        )
        review = _review(a, item)
        assert (review.clarity, review.novelty, review.justification) == (
            2,
            5,
            "Rewritten in tab two.",
        )
        # Each tab shows both edits.
        expect(one.locator(f'textarea[name="{item}-justification"]')).to_have_value(
            "Rewritten in tab two.", timeout=10_000
        )
        expect(two.locator(f'input[name="{item}-clarity"][value="2"]')).to_be_checked()
        expect(two.locator(f'input[name="{item}-novelty"][value="5"]')).to_be_checked(
            timeout=10_000
        )
        assert _kept(one, a) == []


def _typed_while_cut_off(page, assignment: Assignment, box, text: str) -> None:
    """Type ``text`` while this window's saves cannot reach the server, then reconnect and
    type one more character (a keystroke sends the save again on any version of the page)."""
    autosave = f"**/review/g/{assignment.opaque_id}/draft/"
    page.route(autosave, lambda route: route.abort())
    box.fill(text)
    expect(page.locator("#save-status")).to_contain_text("could not be reached", timeout=10_000)
    return lambda: (page.unroute(autosave), box.press("End"), box.type("."))


def test_two_windows_changing_the_same_answer_are_asked_which_to_keep(live_server, personas):
    (a,) = _assignments(personas)
    base = live_server.url
    with chromium() as browser:
        one = _window(browser).new_page()
        item = _open(one, base, personas, a)
        two = _window(browser).new_page()  # another window (or device), logged in as well
        _open(two, base, personas, a)
        box_one = one.locator(f'textarea[name="{item}-justification"]')
        box_two = two.locator(f'textarea[name="{item}-justification"]')

        # Window two writes a reason while cut off; window one saves another meanwhile.
        reconnect = _typed_while_cut_off(two, a, box_two, "The reason written in window two")
        box_one.fill("The reason written in window one.")
        expect(one.locator("#save-status")).to_have_text("Draft saved", timeout=10_000)
        reconnect()

        # Window two's save was based on an older version: refused, both shown side by side.
        dialog = two.locator("#draft-conflict")
        expect(dialog).to_be_visible(timeout=10_000)
        assert _review(a, item).justification == "The reason written in window one."
        expect(dialog.locator(".mine")).to_contain_text("The reason written in window two")
        expect(dialog.locator(".theirs")).to_contain_text("The reason written in window one.")
        expect(two.locator("#save-status")).to_contain_text("Not saved")
        assert any("written in window two" in k for k in _kept(two, a))

        two.locator("section.problem:not(.hidden)").focus()
        two.keyboard.press("m")  # keep mine
        expect(dialog).to_have_count(0)
        expect(two.locator("#save-status")).to_have_text("Draft saved", timeout=10_000)
        assert _review(a, item).justification == "The reason written in window two."
        assert _kept(two, a) == []

        # Now window one is behind; its own change of that answer asks again: take theirs.
        reconnect = _typed_while_cut_off(one, a, box_one, "Window one tries again")
        reconnect()
        dialog = one.locator("#draft-conflict")
        expect(dialog).to_be_visible(timeout=10_000)
        one.locator("section.problem:not(.hidden)").focus()
        one.keyboard.press("t")
        expect(dialog).to_have_count(0)
        expect(box_one).to_have_value("The reason written in window two.")
        expect(one.locator("#save-status")).to_have_text("Draft saved", timeout=10_000)
        assert _review(a, item).justification == "The reason written in window two."
        assert _kept(one, a) == []


# --- 2. a submit after the session ended -----------------------------------------------------


def test_a_submit_after_the_session_ended_is_held_and_sent_after_logging_in_in_the_page(
    live_server, personas
):
    first, second = _assignments(personas, groups=2)
    _complete(first)
    base = live_server.url
    with chromium() as browser:
        page = _window(browser).new_page()
        item = _open(page, base, personas, first)
        other = page.context.new_page()
        _log_out(other, base)
        other.close()

        box = page.locator(f'textarea[name="{item}-justification"]')
        box.fill("Clean reduction, edited after the session ended.")
        expect(page.locator("#session-banner")).to_be_visible(timeout=10_000)
        page.keyboard.press("Control+Enter")

        login = page.locator("#login-dialog")
        expect(login).to_be_visible(timeout=10_000)
        assert page.url == base + _url(first)  # the page stayed; nothing went to a login page
        expect(page.locator("#review-form")).to_be_visible()
        first.refresh_from_db()
        assert first.submitted_at is None

        login.locator("input[name=username]").fill("rae_reviewer")
        login.locator("input[name=password]").fill("not the password")
        login.locator("input[name=password]").press("Enter")
        expect(login.locator(".login-error")).to_contain_text("did not match", timeout=10_000)
        assert page.url == base + _url(first)

        login.locator("input[name=password]").fill(personas.reviewer_a.password)
        login.locator("input[name=password]").press("Enter")
        page.wait_for_url(base + _url(second), timeout=20_000)
        expect(page.locator(".messages")).to_contain_text("Submitted. Next group")

    first.refresh_from_db()
    assert first.submitted_at is not None
    assert _review(first, item).justification == "Clean reduction, edited after the session ended."


# --- 3. saves refused, hung, failed; errors with DEBUG on -------------------------------------


def test_a_refused_save_keeps_the_browser_copy_and_the_leave_warning(live_server, personas):
    (a,) = _assignments(personas)
    base = live_server.url
    with chromium() as browser:
        page = _window(browser).new_page()
        item = _open(page, base, personas, a)
        status = page.locator("#save-status")

        # 422: a value the server refuses (a rating of 9) is not stored; the page says so.
        page.locator(f'textarea[name="{item}-justification"]').click()
        page.keyboard.type("Typed before a refused value.")
        expect(status).to_have_text("Draft saved", timeout=10_000)
        page.locator(f'input[name="{item}-clarity"][value="5"]').evaluate(
            "(r) => { r.value = '9'; }"
        )
        page.locator(f'input[name="{item}-clarity"][value="9"]').check()
        expect(status).to_contain_text("invalid values refused", timeout=10_000)
        kept = _kept(page, a)
        assert kept and '"9"' in kept[0], kept
        assert _review(a, item).clarity is None

        # 409: the group was submitted elsewhere meanwhile; the text typed after is kept.
        data = {"certify_no_ai": "on"}
        for review in a.reviews.select_related("item"):
            data.update(answers(review.item.opaque_id))
        assert services.assignment_submit(assignment=a, data=data).ok
        page.locator(f'textarea[name="{item}-justification"]').click()
        page.keyboard.type(" And a last word.")
        expect(status).to_contain_text("already submitted", timeout=10_000)
        assert any("And a last word." in k for k in _kept(page, a))
        assert _leave_warning(page) == ["beforeunload"]


def test_a_hung_save_times_out_and_failed_saves_retry_by_themselves(live_server, personas):
    (a,) = _assignments(personas)
    base = live_server.url
    autosave = f"**/review/g/{a.opaque_id}/draft/"
    with chromium() as browser:
        page = _window(browser).new_page()
        page.add_init_script(FAST_TIMING)
        item = _open(page, base, personas, a)
        status = page.locator("#save-status")
        box = page.locator(f'textarea[name="{item}-justification"]')

        # The server never answers: the save gives up after its timeout and says so.
        page.route(autosave, lambda route: None)
        box.fill("Typed while the server hangs.")
        expect(status).to_contain_text("did not answer", timeout=10_000)
        assert any("while the server hangs" in k for k in _kept(page, a))
        page.unroute(autosave)
        # No keystroke: the retry sends it once the server answers again.
        expect(status).to_have_text("Draft saved", timeout=15_000)
        assert _review(a, item).justification == "Typed while the server hangs."
        assert _kept(page, a) == []

        # The network is down: retried with growing delays, without any keystroke.
        attempts: list[float] = []

        def down(route):
            if route.request.method == "POST":
                attempts.append(time.monotonic())
            route.abort()

        page.route(autosave, down)
        box.fill("Typed while offline.")
        expect(status).to_contain_text("could not be reached", timeout=10_000)
        _until(page, lambda: len(attempts) >= 3, "three attempts without a keystroke")
        gaps = [later - earlier for earlier, later in zip(attempts, attempts[1:], strict=False)]
        assert gaps[1] > gaps[0], gaps  # backoff: the second wait is longer
        assert any("Typed while offline." in k for k in _kept(page, a))
        page.unroute(autosave)
        expect(status).to_have_text("Draft saved", timeout=15_000)
        assert _review(a, item).justification == "Typed while offline."
        assert _kept(page, a) == []


DEBUG_PAGE = "<!doctype html><html><body><h1>DEBUG-ERROR-PAGE {status}</h1></body></html>"


def _answer_with(code: int):
    """A route handler answering every request with ``code`` and an error page."""

    def handler(route):
        route.fulfill(status=code, content_type="text/html", body=DEBUG_PAGE.format(status=code))

    return handler


def test_autosave_errors_stay_inside_the_page_with_debug_on(
    live_server, personas, settings, monkeypatch
):
    settings.DEBUG = True  # as in `make demo`: django-htmx's error page handler is loaded
    (a,) = _assignments(personas)
    base = live_server.url
    autosave = f"**/review/g/{a.opaque_id}/draft/"
    with chromium() as browser:
        page = _window(browser).new_page()
        page.add_init_script(FAST_TIMING)
        item = _open(page, base, personas, a)
        status = page.locator("#save-status")
        box = page.locator(f'textarea[name="{item}-justification"]')

        for code in (400, 403, 404):
            page.route(autosave, _answer_with(code))
            box.fill(f"Typed before a {code}.")
            expect(status).to_contain_text(f"Not saved: the server answered {code}", timeout=10_000)
            expect(page.locator("#review-form")).to_be_visible()
            expect(page.locator("body")).not_to_contain_text("DEBUG-ERROR-PAGE")
            assert any(f"Typed before a {code}." in k for k in _kept(page, a))
            page.unroute(autosave)

        # A real server error: Django's own debug page comes back with the 500.
        def broken(**kwargs):
            raise RuntimeError("DEBUG-ERROR-PAGE from the server")

        real = services.assignment_save_draft
        monkeypatch.setattr(services, "assignment_save_draft", broken)
        box.fill("Typed before a 500.")
        expect(status).to_contain_text("Not saved: the server answered 500", timeout=10_000)
        expect(page.locator("#review-form")).to_be_visible()
        expect(page.locator("body")).not_to_contain_text("DEBUG-ERROR-PAGE")
        monkeypatch.setattr(services, "assignment_save_draft", real)
        expect(status).to_have_text("Draft saved", timeout=15_000)  # retried by itself
        assert _review(a, item).justification == "Typed before a 500."


# --- 4. a submit sent twice -----------------------------------------------------------------


def test_ctrl_enter_twice_submits_once_and_opens_the_next_group(live_server, personas, monkeypatch):
    first, second = _assignments(personas, groups=2)
    _complete(first)
    calls: list[int] = []
    release = threading.Event()
    real = services.assignment_submit

    def held(**kwargs):
        # The first submit is stored, then its answer waits until the second key press.
        try:
            return real(**kwargs)
        finally:
            calls.append(kwargs["assignment"].pk)
            release.wait(timeout=30)

    monkeypatch.setattr(services, "assignment_submit", held)
    base = live_server.url
    try:
        with chromium() as browser:
            page = _window(browser).new_page()
            _open(page, base, personas, first)
            page.keyboard.press("Control+Enter")
            _until(page, lambda: calls, "the first submit at the server")
            page.keyboard.press("Control+Enter")
            release.set()
            page.wait_for_url(base + _url(second), timeout=20_000)
            expect(page.locator(".messages")).to_contain_text("Submitted. Next group")
            expect(page.locator("body")).not_to_contain_text("already submitted")
            assert len(calls) == 1
    finally:
        release.set()
    first.refresh_from_db()
    assert first.submitted_at is not None


def test_a_second_tab_submitting_the_same_answers_moves_on(live_server, personas):
    first, second = _assignments(personas, groups=2)
    _complete(first)
    base = live_server.url
    with chromium() as browser:
        context = _window(browser)
        one = context.new_page()
        _open(one, base, personas, first)
        two = context.new_page()
        _open(two, base, personas, first, logged_in=True)

        one.keyboard.press("Control+Enter")
        one.wait_for_url(base + _url(second), timeout=20_000)
        two.bring_to_front()
        two.locator("section.problem:not(.hidden)").focus()
        two.keyboard.press("Control+Enter")
        two.wait_for_url(base + _url(second), timeout=20_000)
        expect(two.locator(".messages")).to_contain_text("Submitted. Next group")
        expect(two.locator(".messages")).not_to_contain_text(re.compile("already", re.I))
