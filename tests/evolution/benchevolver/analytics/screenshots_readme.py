"""Regenerates the docs' analytics screenshots (docs/img/heatmap.png, analytics.png) from
realistic factory data: a finished campaign of 24 seeds x up to 10 rounds with the Table 5
stopping rules, whose seeds and first accepted problems carry expert reviews.

Not part of the suite (the file name does not start with test_); run it explicitly:

    pytest tests/evolution/benchevolver/analytics/screenshots_readme.py -p no:randomly
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from django.utils import timezone
from playwright.sync_api import sync_playwright

from accounts.services import user_create
from review.models import Assignment, GroupItem, Review, ReviewGroup, ReviewRound, Tag

from .data import build_campaign
from .test_browser import LAUNCH

DOCS = Path(__file__).resolve().parents[4] / "docs" / "img"
SEED_TAGS = ["search", "simulation", "greedy", "sorting", "math", "implementation"]
EVOLVED_TAGS = [
    "segment tree",
    "dynamic programming",
    "heavy-light decomposition",
    "binary search",
    "Aho-Corasick automaton",
    "matrix exponentiation",
    "combinatorics",
    "graphs",
    "greedy",
    "search",
]


def _tags(names):
    return [Tag.objects.get_or_create(name=n)[0] for n in names]


def _review_campaign(built, rng: random.Random) -> None:
    reviewers = [
        user_create(username=f"expert{i}", password="expert-password-1", role="reviewer")
        for i in range(2)
    ]
    rnd = ReviewRound.objects.create(name="Screenshot round")
    accepted = {}
    for c in sorted(built.candidates, key=lambda c: c.round):
        if c.decision == "accepted":
            accepted.setdefault(c.lineage_id, []).append(c.accepted_problem)
    now = timezone.now()
    for position, lineage in enumerate(lin for lin in built.lineages if lin.pk in accepted):
        group = ReviewGroup.objects.create(
            round=rnd, lineage=lineage, root_problem=lineage.seed, position=position
        )
        problems = [lineage.seed, *accepted[lineage.pk][:3]]
        items = [
            GroupItem.objects.create(group=group, problem=p, lineage_position=i)
            for i, p in enumerate(problems)
        ]
        for reviewer in reviewers:
            assignment = Assignment.objects.create(
                group=group, reviewer=reviewer, certified_no_ai=True, submitted_at=now
            )
            for i, item in enumerate(items):
                seed = i == 0
                review = Review.objects.create(
                    assignment=assignment,
                    item=item,
                    position=i,
                    clarity=rng.choice([4, 4, 5]) if seed else rng.choice([4, 5, 5]),
                    novelty=rng.choice([1, 2, 2, 3]) if seed else rng.choice([3, 3, 4]),
                    difficulty=rng.choice([1, 2, 2]) if seed else rng.choice([3, 3, 4, 4]),
                    quality=4,
                    validity="valid" if seed or rng.random() > 0.1 else "invalid",
                    cf_rating=rng.choice([900, 1000, 1100, 1200])
                    if seed
                    else rng.choice([1700, 1900, 2100, 2300, 2500]),
                    submitted_at=now,
                )
                pool = SEED_TAGS if seed else EVOLVED_TAGS
                review.tags.set(_tags(rng.sample(pool, rng.choice([1, 2, 2, 3]))))


def _clip(page, first: str, last: str) -> dict:
    """The page region from the top of ``first`` to the bottom of ``last``."""
    top = page.locator(first).bounding_box()
    bottom = page.locator(last).bounding_box()
    return {
        "x": 0,
        "y": top["y"] - 12,
        "width": page.viewport_size["width"],
        "height": bottom["y"] + bottom["height"] - top["y"] + 24,
    }


def test_readme_screenshots(live_server, transactional_db):
    built = build_campaign(seeds=24, rounds=10, rng_seed=2024, name="LiveCodeBench v6 sample")
    _review_campaign(built, random.Random(5))
    user_create(username="cory", password="cory-password-1", role="curator")
    DOCS.mkdir(parents=True, exist_ok=True)
    base = live_server.url
    pk = built.campaign.pk
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**LAUNCH)
        page = browser.new_page(viewport={"width": 1280, "height": 1000}, device_scale_factor=1)
        page.goto(f"{base}/login/?next=/campaigns/{pk}/heatmap/")
        page.fill("input[name=username]", "cory")
        page.fill("input[name=password]", "cory-password-1")
        page.press("input[name=password]", "Enter")
        page.wait_for_url(re.compile(rf"/campaigns/{pk}/heatmap/$"))
        page.wait_for_selector("#heatmap[data-ready='1']")
        page.screenshot(path=str(DOCS / "heatmap.png"), full_page=True)
        page.goto(f"{base}/campaigns/{pk}/analytics/")
        page.wait_for_function(
            "() => [...document.querySelectorAll('[data-chart]')]"
            ".every(e => e.getAttribute('aria-busy') === 'false')"
        )
        page.wait_for_timeout(500)
        # The page is long: docs/analytics.md shows its top (Table 1, Figures 2 and 4, the funnel)
        # and the review-based charts (Figures 3 and 8) as two images.
        page.screenshot(
            path=str(DOCS / "analytics.png"),
            full_page=True,
            clip=_clip(page, "#cost-summary", "#chart-funnel"),
        )
        page.screenshot(
            path=str(DOCS / "analytics-reviews.png"),
            full_page=True,
            clip=_clip(page, "#chart-categories", "#chart-ratings"),
        )
        browser.close()
    assert (DOCS / "heatmap.png").stat().st_size > 10_000
