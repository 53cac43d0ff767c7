"""A real Chromium at a phone's width: wide tables scroll inside their card and nothing
pushes the page sideways."""

from __future__ import annotations

import pytest

from review import services
from tests.releases.helpers import frozen_release
from tests.support.browser import chromium_page, log_in

from .factories import lineage_with_problems

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

FITS = """() => ({
  page: document.documentElement.scrollWidth,
  viewport: window.innerWidth,
  tables: Array.from(document.querySelectorAll('table')).map((t) => {
    const box = t.closest('.card') || t.parentElement;
    return { table: t.scrollWidth, box: box.clientWidth, scrolls: box.scrollWidth > box.clientWidth
             && getComputedStyle(box).overflowX === 'auto' };
  }),
})"""


def _assert_fits(page) -> None:
    got = page.evaluate(FITS)
    assert got["page"] <= got["viewport"], got
    assert got["tables"], "no table on the page"
    for t in got["tables"]:
        # A table wider than its box scrolls inside it.
        assert t["table"] <= t["box"] or t["scrolls"], got


def test_tables_scroll_inside_their_box_at_phone_width(live_server, personas):
    _, release = frozen_release(publish=True)
    lineage, _ = lineage_with_problems(n_evolved=2, tag="phone")
    review_round = services.round_create(
        name="phone round",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user],
        lineages=[lineage],
    )
    base = live_server.url
    with chromium_page() as page:
        page.set_viewport_size({"width": 375, "height": 800})
        page.goto(f"{base}/releases/{release.benchmark.slug}/v{release.version}/")
        _assert_fits(page)
        log_in(page, base, "cory_curator", personas.curator.password, "/review/rounds/")
        page.goto(f"{base}/review/rounds/{review_round.pk}/")
        _assert_fits(page)
