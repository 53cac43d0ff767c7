"""A real Chromium, keyboard only, from page load to the next group: digits rate the shown
problem without clicking a field first, letters set validity, flag, skip and undo, Escape
leaves a text field, tabs show what is done, submitting opens the next group."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from evolution.models import Problem
from review import services
from review.models import Assignment, Review
from tests.support.browser import chromium_page, docs_screenshot, log_in

from .factories import lineage_with_problems
from .test_browser import tab_to

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

LONG = "\n\n".join(f"Paragraph {i}: constraints and story text." for i in range(120))


def _classes(*names: str) -> re.Pattern:
    """Matches a class attribute holding all ``names``, in any order."""
    return re.compile("".join(rf"(?=.*\b{n}\b)" for n in names))


def _active(page) -> str:
    return page.locator("section.problem:not(.hidden)").get_attribute("data-item")


def _finish_active(page, cf: str, text: str) -> None:
    """Ratings 4 3 5 4 by digits alone, "v" for valid, then the text fields."""
    item = _active(page)
    for digit in "4354":
        page.keyboard.press(digit)
    page.keyboard.press("v")
    tab_to(page, f'select[name="{item}-cf_rating"]', limit=40)
    page.keyboard.type(cf)
    tab_to(page, f'input[name="{item}-tags"]')
    page.keyboard.type("greedy")
    tab_to(page, f'textarea[name="{item}-justification"]')
    page.keyboard.type(text)
    page.keyboard.press("Escape")
    assert page.evaluate("() => document.activeElement.matches('section.problem')")


def test_a_reviewer_goes_from_page_load_to_the_next_group_without_the_mouse(live_server, personas):
    lineages = []
    for tag in ("k1", "k2"):
        lineage, problems = lineage_with_problems(n_evolved=1, tag=tag)
        Problem.objects.filter(pk__in=[p.pk for p in problems]).update(statement=LONG)
        lineages.append(lineage)
    services.round_create(
        name="keyboard round",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user],
        lineages=lineages,
    )
    queue = sorted(
        Assignment.objects.filter(reviewer=personas.reviewer_a.user), key=lambda a: a.opaque_id
    )
    first, second = queue
    base = live_server.url
    with chromium_page() as page:
        page.set_viewport_size({"width": 1280, "height": 700})
        log_in(
            page,
            base,
            "rae_reviewer",
            personas.reviewer_a.password,
            f"/review/g/{first.opaque_id}/",
        )
        expect(page.locator("#queue-progress-text")).to_have_text(
            "0 of 2 group(s) in your queue submitted"
        )
        expect(page.locator("#group-progress")).to_have_text("0 of 2 in this group done")

        # Digits with no field focused rate the shown problem's scales in order.
        one = _active(page)
        for digit in "435":
            page.keyboard.press(digit)
        expect(page.locator(f'input[name="{one}-clarity"][value="4"]')).to_be_checked()
        expect(page.locator(f'input[name="{one}-novelty"][value="3"]')).to_be_checked()
        expect(page.locator(f'input[name="{one}-difficulty"][value="5"]')).to_be_checked()
        page.keyboard.press("z")  # undo the last key
        expect(page.locator(f'input[name="{one}-difficulty"][value="5"]')).not_to_be_checked()
        # "i" (invalid) goes to the reason, which a non-valid verdict needs; Escape leaves it.
        page.keyboard.press("i")
        expect(page.locator(f'input[name="{one}-validity"][value="invalid"]')).to_be_checked()
        expect(page.locator(f'textarea[name="{one}-validity_reason"]')).to_be_focused()
        page.keyboard.press("Escape")
        page.keyboard.press("z")  # undo "invalid"
        expect(page.locator(f'input[name="{one}-validity"]:checked')).to_have_count(0)
        # Flag it and skip to the next problem not done.
        page.keyboard.press("f")
        tabs = page.locator(".problem-tabs a")
        expect(tabs.nth(0)).to_have_class(_classes("flagged", "active"))
        page.keyboard.press("s")
        two = _active(page)
        assert two != one
        _finish_active(page, "1800", "Exchange argument.")
        expect(tabs.nth(1)).to_have_class(_classes("done", "active"))
        expect(page.locator("#group-progress")).to_have_text("1 of 2 in this group done")

        # Statement and form scroll on their own.
        shown = page.locator("section.problem:not(.hidden)")
        scroll = shown.evaluate(
            """(s) => {
              const st = s.querySelector('.statement'), fm = s.querySelector('.rating-form');
              const y = window.scrollY, f = fm.scrollTop;
              st.scrollTop = 400;
              return [getComputedStyle(st).overflowY, st.scrollTop, fm.scrollTop - f, window.scrollY - y];
            }"""
        )
        assert scroll[0] == "auto" and scroll[1] > 0 and scroll[2] == 0 and scroll[3] == 0

        page.keyboard.press("s")  # back to the first, flagged, unfinished problem
        assert _active(page) == one
        _finish_active(page, "2100", "Needs a segment tree.")
        expect(page.locator("#group-progress")).to_have_text("2 of 2 in this group done")
        expect(tabs.nth(0)).to_have_class(_classes("flagged", "done", "active"))

        page.keyboard.press("Escape")
        docs_screenshot(page, "review-keyboard.png")
        tab_to(page, 'input[name="certify_no_ai"]', limit=60)
        page.keyboard.press("Space")
        expect(page.locator("#save-status")).to_have_text("Draft saved", timeout=10_000)
        page.keyboard.press("Control+Enter")
        page.wait_for_url(f"{base}/review/g/{second.opaque_id}/")
        expect(page.locator("#queue-progress-text")).to_have_text(
            "1 of 2 group(s) in your queue submitted"
        )
        expect(page.locator(".messages")).to_contain_text("Submitted. Next group")

    first.refresh_from_db()
    assert first.submitted_at is not None
    got = {r.item.opaque_id: r for r in Review.objects.filter(assignment=first)}
    # Clarity 4 and novelty 3 were set first; "4354" then filled the two scales still open
    # (difficulty 4, quality 3) and the last two digits found nothing left to rate.
    ratings = (got[one].clarity, got[one].novelty, got[one].difficulty, got[one].quality)
    assert ratings == (4, 3, 4, 3)
    assert (got[two].clarity, got[two].novelty, got[two].difficulty, got[two].quality) == (
        4,
        3,
        5,
        4,
    )
    assert got[one].validity == "valid" and got[two].cf_rating == 1800
