"""The public release page and card at scale (issue #36): no query per item. Reading the items'
provenances through model instances holding only them loaded each item's release id again,
one query per item: 1,029 queries for a release of 1,000 problems."""

from __future__ import annotations

from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from releases import living


def _one_item_queries(queries) -> list[str]:
    return [q["sql"] for q in queries if '"releases_releaseitem"."id" = ' in q["sql"]]


def test_the_release_page_and_card_read_no_item_alone(client, published):
    _, release = published
    base = f"/releases/{release.benchmark.slug}/v{release.version}/"
    for path in (base, base + "card.md"):
        cache.clear()
        with CaptureQueriesContext(connection) as queries:
            assert client.get(path).status_code == 200
        assert _one_item_queries(queries) == [], path


def test_the_current_levels_read_no_item_alone(published):
    _, release = published
    with CaptureQueriesContext(connection) as queries:
        levels = living.current_levels(release=release)
    assert set(levels) <= set(release.items.values_list("public_id", flat=True))
    assert levels
    assert _one_item_queries(queries) == []
