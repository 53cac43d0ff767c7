"""A real Chromium on the reviewer's own pages (issue #33, finding 9): the queue fits a phone's
width, and a submitted group shows its answers as plain text with the day it was submitted,
never as greyed-out disabled inputs."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone

from review import services
from review.models import Assignment
from tests.support.browser import chromium_page, docs_screenshot, log_in

from .conftest import answers
from .factories import lineage_with_problems

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Every cell of the queue: where it is, what it says, and how large its text is.
QUEUE_CELLS = """() => Array.from(document.querySelectorAll('table.queue tbody td')).map((td) => {
  const r = td.getBoundingClientRect();
  return { left: r.left, right: r.right, width: r.width, text: td.innerText.trim(),
           label: getComputedStyle(td, '::before').content,
           font: parseFloat(getComputedStyle(td).fontSize) };
})"""

# WCAG contrast of an element's text against white (the card it sits on).
CONTRAST = """(el) => {
  const lum = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  const [r, g, b, a] = getComputedStyle(el).color.match(/[\\d.]+/g).map(Number);
  const alpha = (a === undefined ? 1 : a) * Number(getComputedStyle(el).opacity);
  const blend = (c) => c * alpha + 255 * (1 - alpha);
  const L = 0.2126 * lum(blend(r)) + 0.7152 * lum(blend(g)) + 0.0722 * lum(blend(b));
  return 1.05 / (L + 0.05);
}"""


def _round(personas, groups: int, n_evolved: int = 2) -> list[Assignment]:
    lineages = [lineage_with_problems(n_evolved=n_evolved, tag=f"rp{i}")[0] for i in range(groups)]
    services.round_create(
        name="reviewer pages round",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user],
        lineages=lineages,
    )
    return sorted(
        Assignment.objects.filter(reviewer=personas.reviewer_a.user), key=lambda a: a.opaque_id
    )


def _submit(assignment: Assignment, **overrides) -> None:
    data = {"certify_no_ai": "on"}
    for review in assignment.reviews.select_related("item"):
        data.update(answers(review.item.opaque_id, **overrides))
    result = services.assignment_submit(assignment=assignment, data=data)
    assert result.ok, {k: f.errors for k, f in result.forms.items()}


def test_the_queue_fits_a_phone_without_scrolling_sideways(live_server, personas):
    assignments = _round(personas, groups=3)
    _submit(assignments[0])
    base = live_server.url
    with chromium_page(375, 800) as page:
        log_in(page, base, "rae_reviewer", personas.reviewer_a.password, "/review/")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 375, f"the queue scrolls sideways: {width} px wide at 375 px"
        cells = page.evaluate(QUEUE_CELLS)
        assert len(cells) == 3 * 4
        for cell in cells:
            # Every value is whole on screen, readable and named (the header row is hidden).
            assert cell["left"] >= 0 and cell["right"] <= 375, cell
            assert cell["font"] >= 12 and cell["text"], cell
            assert cell["label"].strip('"') in ("Group", "Problems", "Drafted", "Status"), cell
        texts = [c["text"] for c in cells]
        for a in assignments:
            assert a.opaque_id in texts
        assert texts.count("submitted") == 1 and texts.count("to do") == 2
        assert "3 / 3" in texts and "0 / 3" in texts
        docs_screenshot(page, "review-queue-phone.png", full_page=True)
        # Each group still opens from its id.
        page.click(f"text={assignments[1].opaque_id}")
        page.wait_for_url(re.compile(re.escape(f"/review/g/{assignments[1].opaque_id}/") + "$"))
        # On a wide screen it stays a table with its header row.
        page.set_viewport_size({"width": 1366, "height": 800})
        page.goto(f"{base}/review/")
        assert page.locator("table.queue thead th").first.is_visible()
        assert page.evaluate(
            "getComputedStyle(document.querySelector('table.queue tr')).display"
        ) == ("table-row")


def test_a_submitted_group_shows_its_answers_as_text_with_the_day_it_was_sent(
    live_server, personas
):
    # Four problems: the most a group holds, every tab marked done.
    (assignment,) = _round(personas, groups=1, n_evolved=3)
    _submit(assignment, clarity="4", quality="2", validity="unsure", validity_reason="Edge n=0?")
    assignment.refresh_from_db()
    sent = timezone.localtime(assignment.submitted_at)
    base = live_server.url
    with chromium_page(1366, 900) as page:
        log_in(
            page,
            base,
            "rae_reviewer",
            personas.reviewer_a.password,
            f"/review/g/{assignment.opaque_id}/",
        )
        state = page.locator("#submitted-state")
        assert state.is_visible()
        heading = state.locator("h2").inner_text()
        assert heading == f"Submitted {sent.day} {sent:%B %Y} at {sent:%H:%M}", heading
        # Nothing to click and nothing greyed out: no inputs at all, no disabled fieldset.
        assert (
            page.locator(
                "#review-form input:not([type=hidden]), #review-form textarea, #review-form select"
            ).count()
            == 0
        )
        assert page.locator("#review-form [disabled]").count() == 0
        for index in range(4):
            page.locator(".problem-tabs a").nth(index).click()
            section = page.locator("section.problem:not(.hidden)")
            shown = dict(
                zip(
                    section.locator("dl.answers dt").all_inner_texts(),
                    section.locator("dl.answers dd").all_inner_texts(),
                    strict=True,
                )
            )
            assert shown == {
                "Clarity": "4 — Clear; small polish possible",
                "Novelty": "3 — A familiar technique in a fresh setting",
                "Difficulty": "3 — Medium: combine standard ideas carefully",
                "Quality": "2 — Usable only after substantial rework",
                "Validity": "unsure",
                "Validity reason": "Edge n=0?",
                "Codeforces rating estimate": "1900",
                "Algorithms and data structures": "dp, HLD",
                "Justification": "Clean reduction to a known technique.",
            }, shown
            for dd in section.locator("dl.answers dd").all():
                assert dd.evaluate(CONTRAST) >= 4.5
        certify = page.locator("section.submitted-certify").inner_text()
        assert "You certified that you used no generative AI" in certify
        # The keyboard help is for rating; a submitted group has nothing to rate.
        assert page.locator("details.keys").count() == 0
        # On a phone the four done tabs wrap instead of pushing the page sideways.
        page.set_viewport_size({"width": 375, "height": 800})
        page.goto(f"{base}/review/g/{assignment.opaque_id}/")
        assert page.locator("#submitted-state").is_visible()
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 375, f"the submitted group scrolls sideways: {width} px wide at 375 px"
