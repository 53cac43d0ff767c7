"""A real Chromium: a reviewer rates a whole group with the keyboard only, reloads midway
and finds the draft, submits; the curator then sees the aggregates."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect, sync_playwright

from evolution.importers import import_seeds
from evolution.models import Problem
from evolution.screening import services as screening
from review import services
from review.models import Assignment, Review

from .conftest import answers
from .factories import lineage_with_problems

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LAUNCH = {
    "executable_path": "/usr/bin/chromium",
    "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
}


def tab_to(page, selector: str, limit: int = 15) -> None:
    """Press Tab until the focused element matches ``selector`` (keyboard only)."""
    for _ in range(limit):
        if page.evaluate(
            "(s) => document.activeElement && document.activeElement.matches(s)", selector
        ):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {selector}")


def _log_in(page, base: str, username: str, password: str, next_url: str) -> None:
    page.goto(f"{base}/login/?next={next_url}")
    page.keyboard.type(username)  # the username field has autofocus
    page.keyboard.press("Tab")
    page.keyboard.type(password)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(re.escape(next_url) + "$"))


def _rate_active_problem(
    page,
    ratings: tuple[int, int, int, int],
    cf: str,
    tags: str,
    text: str,
    pick_first_suggestion=False,
):
    item = page.locator("section.problem:not(.hidden)").get_attribute("data-item")
    # j / k focus the first rating of the shown problem; digits set ratings; Tab moves on.
    for value in ratings:
        page.keyboard.press(str(value))
        page.keyboard.press("Tab")
    page.keyboard.press("Space")  # validity: the first choice, "valid"
    tab_to(page, f'select[name="{item}-cf_rating"]')
    page.keyboard.type(cf)
    tab_to(page, f'input[name="{item}-tags"]')
    page.keyboard.type(tags)
    if pick_first_suggestion:
        page.locator(f"#sugg-{item} button.tag-pick").first.wait_for()
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        expect(page.locator(f'input[name="{item}-tags"]')).to_have_value(
            re.compile("heavy-light decomposition")
        )
    tab_to(page, f'textarea[name="{item}-justification"]')
    page.keyboard.type(text)
    tab_to(page, 'input[name="certify_no_ai"]')  # leaves the text fields so j / k work again
    return item


@pytest.mark.django_db(transaction=True)
def test_a_reviewer_rates_a_group_with_the_keyboard_and_the_curator_sees_aggregates(
    live_server, personas, monkeypatch
):
    # Playwright's sync API runs an event loop in this thread; the ORM calls here are ours.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    lineage, problems = lineage_with_problems(n_evolved=2, tag="browser")
    # Every problem recalls a HumanEval program (the seed HumanEval/0's, the evolved ones
    # HumanEval/12's): whichever is disputed, its screen names one above the threshold.
    import_seeds(source="humaneval")
    origins = ("HumanEval/0", "HumanEval/12", "HumanEval/12")
    for problem, origin in zip(problems, origins, strict=True):
        recalled = Problem.objects.get(origin_id=origin)
        problem.reference_solution = recalled.reference_solution
        problem.save(update_fields=["reference_solution"])
        screening.screen_problem(problem, context="measurement")
    review_round = services.round_create(
        name="browser round",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user, personas.reviewer_b.user],
        lineages=[lineage],
    )
    b = Assignment.objects.get(reviewer=personas.reviewer_b.user)
    data = {"certify_no_ai": "on"}
    for review in b.reviews.select_related("item"):
        data.update(answers(review.item.opaque_id, clarity=5, difficulty=4, tags="segment tree"))
    assert services.assignment_submit(assignment=b, data=data).ok
    a = Assignment.objects.get(reviewer=personas.reviewer_a.user)
    base = live_server.url

    with sync_playwright() as pw:
        browser = pw.chromium.launch(**LAUNCH)
        try:
            page = browser.new_page()
            _log_in(page, base, "rae_reviewer", personas.reviewer_a.password, "/review/")
            page.locator(f'a[href="/review/g/{a.opaque_id}/"]').focus()
            page.keyboard.press("Enter")
            page.wait_for_url(f"{base}/review/g/{a.opaque_id}/")
            expect(page.locator("section.problem:not(.hidden)")).to_have_count(1)

            page.keyboard.press("j")
            page.keyboard.press("k")  # back to the first problem, its first rating focused
            first = _rate_active_problem(
                page, (4, 3, 5, 4), "2100", "HLD", "Needs heavy-light.", pick_first_suggestion=True
            )
            expect(page.locator("#save-status")).to_have_text("Draft saved", timeout=10_000)

            page.reload()  # midway: the draft must be there
            expect(page.locator(f'input[name="{first}-clarity"][value="4"]')).to_be_checked()
            expect(page.locator(f'input[name="{first}-difficulty"][value="5"]')).to_be_checked()
            expect(page.locator(f'textarea[name="{first}-justification"]')).to_have_value(
                "Needs heavy-light."
            )
            expect(page.locator(f'select[name="{first}-cf_rating"]')).to_have_value("2100")

            page.keyboard.press("j")
            second = _rate_active_problem(
                page, (4, 4, 3, 4), "1800", "greedy", "Exchange argument."
            )
            assert second != first
            page.keyboard.press("j")
            third = _rate_active_problem(page, (3, 2, 2, 3), "1200", "math", "Formula.")
            assert third not in (first, second)
            page.keyboard.press("Space")  # certify (focus is on the checkbox)
            expect(page.locator('input[name="certify_no_ai"]')).to_be_checked()
            page.keyboard.press("Control+Enter")
            page.wait_for_url(f"{base}/review/")
            expect(page.locator("body")).to_contain_text("submitted")

            a.refresh_from_db()
            assert a.submitted_at is not None
            got = {
                r.item.opaque_id: r
                for r in Review.objects.filter(assignment=a).select_related("item")
            }
            assert (
                got[first].clarity,
                got[first].novelty,
                got[first].difficulty,
                got[first].quality,
            ) == (4, 3, 5, 4)
            assert got[first].cf_rating == 2100 and got[third].cf_rating == 1200
            assert {t.name for t in got[first].tags.all()} == {"heavy-light decomposition"}
            assert sum(r.seconds_spent for r in got.values()) > 0

            curator = browser.new_page()
            detail = f"/review/rounds/{review_round.pk}/"
            _log_in(curator, base, "cory_curator", personas.curator.password, detail)
            row = curator.locator("#aggregates tr", has_text=got[first].item.problem.title)
            # clarity: A said 4, B said 5 -> 4.5; tags are the union of both reviewers'.
            expect(row).to_contain_text("4.5")
            expect(row).to_contain_text("heavy-light decomposition, segment tree")
            expect(curator.locator("#agreement")).to_contain_text("Krippendorff")
            expect(curator.locator("#progress")).to_contain_text("rae_reviewer")
            # A disagreement (clarity 3 against 5 on the third problem) shows, beside the
            # ratings, the disputed problem's nearest public problems and the threshold.
            panel = curator.locator("#adjudication details.screen-panel").first
            expect(panel).to_be_visible()
            expect(panel.locator("summary")).to_contain_text("at or above 0.3")
            nearest = panel.locator("tr.screen-neighbour").first
            expect(nearest).to_be_visible()
            expect(nearest).to_have_attribute("data-origin-id", re.compile(r"^HumanEval/(0|12)$"))
            expect(nearest).to_contain_text("humaneval")
            expect(nearest.locator("td.screen-above")).to_have_text("above")
        finally:
            browser.close()
