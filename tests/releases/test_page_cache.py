"""Public release pages are cached per content for anonymous visitors, and what may still
change after publication (errata, leaderboard runs) shows at once."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client

from releases import services
from releases.models import ErratumKind
from tests.support.scoring import complete


@pytest.fixture(autouse=True)
def _fresh_cache(settings):
    settings.PUBLIC_PAGE_CACHE_SECONDS = 600
    cache.clear()
    yield
    cache.clear()


def _urls(release):
    base = f"/releases/{release.benchmark.slug}/v{release.version}/"
    item = release.items.first().public_id
    return [base, base + "card.md", base + "leaderboard/", base + f"items/{item}/"]


def test_an_anonymous_visitor_gets_the_cached_page_with_fewer_queries(
    published, django_assert_max_num_queries
):
    _, release = published
    client = Client()
    for url in _urls(release):
        first = client.get(url)
        assert first.status_code == 200 and first["X-Page-Cache"] == "miss", url
        with django_assert_max_num_queries(5):
            again = client.get(url)
        assert again["X-Page-Cache"] == "hit", url
        assert again.content == first.content


def test_a_cached_public_page_holds_no_csrf_token(published):
    _, release = published
    page = Client().get(_urls(release)[0]).content.decode()
    assert "csrfmiddlewaretoken" not in page and "X-CSRFToken" not in page


def test_signed_in_users_are_never_served_a_cached_page(published, personas):
    _, release = published
    url = _urls(release)[0]
    Client().get(url)
    response = personas.curator.client.get(url)
    assert response.status_code == 200 and "X-Page-Cache" not in response
    assert personas.curator.user.username in response.content.decode()


def test_a_new_erratum_shows_at_once(published, personas):
    world, release = published
    url = _urls(release)[0]
    client = Client()
    client.get(url)
    services.erratum_create(
        release=release,
        item_public_id=release.items.first().public_id,
        kind=ErratumKind.choices[0][0],
        description="Expected output of test 3 is wrong.",
        by=personas.curator.user,
    )
    response = client.get(url)
    assert response["X-Page-Cache"] == "miss"
    assert "Expected output of test 3 is wrong." in response.content.decode()


def test_a_completed_leaderboard_run_shows_at_once(published):
    world, release = published
    from releases import leaderboard

    url = _urls(release)[2]
    client = Client()
    client.get(url)
    import json

    content = json.dumps({"question_id": world.problem("E-OK").public_id, "code_list": ["x"]})
    run = leaderboard.run_create_from_upload(release=release, label="newcomer-7b", content=content)
    complete(run)  # as the scoring service completes it
    response = client.get(url)
    assert response["X-Page-Cache"] == "miss"
