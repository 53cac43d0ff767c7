"""Public release pages never tell a reviewer which problem of a blind group is the seed.

While a problem is in an open review round with an unsubmitted assignment, every public page
withholds its origin, difficulty (and what it rests on), real limits, tags and measured
pass@1, and the pages of its release withhold the counts and leaderboard columns that split
the release by origin or difficulty. A reviewer with an open assignment gets a page saying
public release pages are off limits instead of any of them. The crawl visits every page
reachable from the release list (and the public API about the release) as an anonymous
visitor and as that reviewer, and searches each for every one of those facts; the same
detector, once the round is submitted, finds them all again, so it is not blind to them.
"""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client

from releases import living
from releases import views as release_views

from .blind_review import (
    COUNTS_WITHHELD,
    OFF_LIMITS,
    blind_world,
    crawl_public,
    leaks,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(personas):
    return blind_world(personas)


def _pages_by_path(pages):
    return {p.url: p for p in pages}


def test_the_fixture_has_problems_under_review_and_one_not(world):
    assert {f.key for f in world.under_review} == {"S2", "E-OVERRIDE"}
    assert {f.key for f in world.visible} == {"E-OK"}
    s2 = next(f for f in world.under_review if f.key == "S2")
    assert (s2.origin, s2.difficulty, s2.time_limit_s) == ("original", "hard", 2.5)
    assert any(f.tags for f in world.under_review)


def test_an_anonymous_visitor_sees_none_of_the_withheld_facts_anywhere(world):
    pages = crawl_public(Client(), world)
    reached = {p.url for p in pages if p.status == 200}
    # The crawl reached the list, the release, its card, leaderboard, every item, the living
    # page (by link) and the API.
    for url in world.urls:
        assert url in reached, url
    assert any("?sort=" in url for url in reached), "the leaderboard's sort links were not followed"
    assert leaks(pages, world.under_review) == []
    by_url = _pages_by_path(pages)
    detail, card = by_url[world.urls[1]], by_url[world.urls[2]]
    for page in (by_url["/releases/"], detail, card):
        assert COUNTS_WITHHELD in page.body, page.url
    assert "withheld during blind review" in by_url[world.urls[3]].body  # the leaderboard


def test_the_problem_not_under_review_still_shows_its_facts(world):
    """The detector sees the facts of a problem nobody is rating blind: it is not blind."""
    pages = crawl_public(Client(), world)
    found = "\n".join(leaks(pages, world.visible))
    e_ok = world.visible[0]
    for fact in (
        "origin 'evolved'",
        "a difficulty label",
        "the difficulty basis",
        "time limit 3.25 s",
        "memory 448 MB",
        "tag 'sweep-line-SECRET'",
        "measured pass@1 0.44",
    ):
        assert f"{e_ok.public_id} (E-OK) shows {fact}" in found, fact


def test_every_fact_shows_again_once_every_reviewer_has_submitted(world):
    world.close_round()
    pages = crawl_public(Client(), world)
    found = "\n".join(leaks(pages, world.under_review))
    for facts in world.under_review:
        for name in facts.patterns():
            assert f"{facts.public_id} ({facts.key}) shows {name}" in found, (facts.key, name)
    for fact in ("origin count", "leaderboard breakdown", "date window", "contamination count"):
        assert fact in found, fact
    detail = Client().get(world.urls[1]).content.decode()
    assert COUNTS_WITHHELD not in detail


def test_the_date_window_is_withheld_while_a_problem_is_rated_blind(world):
    """The seed's date is its contest's (2023), its evolutions' the day they were made: a
    window from 2024 on would keep only evolutions, and "1 flagged" for a model released in
    2024 would count the original."""
    client = Client()
    leaderboard = world.urls[3]
    api = f"/api/releases/{world.release.pk}/leaderboard"
    windowed = client.get(leaderboard, {"after": "2024-01-01"}).content.decode()
    assert "2 of 3 problems in view" not in windowed
    assert "3 of 3 problems in view" in windowed  # the window is not applied
    refused = client.get(api, {"after": "2024-01-01"})
    assert refused.status_code == 409
    assert "date window is withheld" in refused.json()["detail"]
    (row,) = client.get(api).json()
    assert (row["clean"], row["flagged"]) == (None, None)
    assert client.get(api, {"sort": "clean"}).status_code == 200  # an unknown sort: pass@1
    world.close_round()
    assert (
        "2 of 3 problems in view"
        in client.get(leaderboard, {"after": "2024-01-01"}).content.decode()
    )
    assert client.get(api, {"after": "2024-01-01"}).status_code == 200
    (row,) = client.get(api).json()
    assert row["flagged"] == 1


def test_a_reviewer_with_an_open_assignment_is_told_public_pages_are_off_limits(world, personas):
    client = personas.reviewer_a.client
    pages = crawl_public(client, world)
    html = [p for p in pages if p.url in world.urls]
    assert len(html) == len(world.urls)
    for page in html:
        assert page.status == 403, page.url
        assert OFF_LIMITS in page.body, page.url
        assert "no-store" in page.headers.get("Cache-Control", ""), page.url
    assert leaks(pages, world.under_review) == []
    assert leaks(pages, world.visible) == []  # no content at all, not even the others'
    # Not a single statement of the release reaches them.
    for item in world.release.items.all():
        assert not any(item.record["statement"][:40] in p.body for p in pages)


def test_the_public_api_is_off_limits_to_a_reviewer_with_an_open_assignment(world, personas):
    client = personas.reviewer_a.client
    for url in (
        "/api/releases",
        f"/api/releases/{world.release.pk}/leaderboard",
        f"/api/benchmarks/{world.release.benchmark.slug}/living",
    ):
        response = client.get(url)
        assert response.status_code == 403, url
        assert OFF_LIMITS in response.json()["detail"], url


def test_a_reviewer_whose_assignments_are_submitted_may_read_public_pages(world, personas):
    world.close_round()
    response = personas.reviewer_a.client.get(world.urls[1])
    assert response.status_code == 200 and OFF_LIMITS not in response.content.decode()
    # Curators and anonymous visitors are never sent away.
    world_open = personas.curator.client.get(world.urls[1])
    assert world_open.status_code == 200


def test_the_off_limits_page_is_never_cached_for_anyone_else(world, personas, settings):
    settings.PUBLIC_PAGE_CACHE_SECONDS = 600
    cache.clear()
    try:
        for url in world.urls[1:]:
            assert OFF_LIMITS in personas.reviewer_a.client.get(url).content.decode()
            anonymous = Client().get(url)
            assert anonymous.status_code == 200, url
            assert OFF_LIMITS not in anonymous.content.decode(), url
    finally:
        cache.clear()


def test_a_page_cached_before_the_round_opened_is_not_served_after(personas, settings):
    """The public page cache keys on which of the release's problems are under blind review:
    pages cached with every fact shown are not served once a round opens, nor the withheld
    pages once it is submitted."""
    settings.PUBLIC_PAGE_CACHE_SECONDS = 600
    cache.clear()
    try:
        world = blind_world(personas)
        world.close_round()
        client = Client()
        before = {url: client.get(url) for url in world.urls[1:5]}
        assert all(r.status_code == 200 for r in before.values())
        assert all(client.get(url)["X-Page-Cache"] == "hit" for url in before)
        from review.models import Assignment

        Assignment.objects.filter(group__round=world.review_round).update(
            submitted_at=None, certified_no_ai=False
        )
        assert all(client.get(url)["X-Page-Cache"] == "miss" for url in before)
        pages = crawl_public(client, world)
        assert leaks(pages, world.under_review) == []
        assert all(client.get(url)["X-Page-Cache"] == "hit" for url in before)
        # Submitted again: the pages with every fact (cached first) are right again.
        world.close_round()
        detail = client.get(world.urls[1])
        assert COUNTS_WITHHELD not in detail.content.decode()
        assert leaks(crawl_public(client, world), world.under_review) != []
    finally:
        cache.clear()


def test_the_changelog_withholds_why_a_problem_under_review_joined(world, monkeypatch):
    """Why a problem joined ("re-evolved from saturated <seed> (<campaign>)") names its origin."""
    blind = world.under_review[0].public_id
    shown = world.visible[0].public_id

    def reasons(*, release, changelog):
        return {
            "retired": {},
            "replacing": {
                blind: "re-evolved from saturated lcb-SEED-SECRET (campaign-SECRET)",
                shown: "re-evolved from saturated lcb-OTHER (campaign-OTHER)",
            },
        }

    monkeypatch.setattr(living, "changelog_reasons", reasons)
    assert release_views.living is living
    body = Client().get(world.urls[1]).content.decode()
    assert "lcb-SEED-SECRET" not in body and "campaign-SECRET" not in body
    assert "lcb-OTHER" in body


def test_the_changelog_withholds_a_removal_that_names_a_problem_under_review(world, monkeypatch):
    """A removal's reason names what replaced it ("re-evolved into <id>"): an evolution."""
    blind = world.under_review[0].public_id
    shown = world.visible[0].public_id

    def reasons(*, release, changelog):
        return {
            "retired": {
                "pOLDONE": f"saturated on 2026-11-28 (solved by strong); re-evolved into {blind}",
                "pOLDTWO": f"saturated on 2026-11-28 (solved by strong); re-evolved into {shown}",
            },
            "replacing": {},
        }

    monkeypatch.setattr(living, "changelog_reasons", reasons)
    body = Client().get(world.urls[1]).content.decode()
    assert f"re-evolved into {blind}" not in body
    assert "<code>pOLDONE</code>: withheld during blind review" in body
    assert (
        f"<code>pOLDTWO</code>: saturated on 2026-11-28 (solved by strong); re-evolved into {shown}"
        in body
    )
