"""Anonymous visitors see published data only and never hidden tests: a crawl of every page
reachable from the public list, plus direct probes of what must stay private."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin, urlparse

import pytest
from django.test import Client
from django.urls import reverse

from releases import services
from releases.models import LeaderboardRun
from tests.support.scoring import completed_run

from .builders import HIDDEN_DIGITS, HIDDEN_MARKER
from .helpers import frozen_release


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src", "action") and value:
                self.links.append(value)


def crawl(client: Client, start: str, limit: int = 200) -> dict[str, tuple[int, str]]:
    """Every same-site page reachable from ``start`` (static files aside)."""
    seen: dict[str, tuple[int, str]] = {}
    queue = [start]
    while queue and len(seen) < limit:
        url = queue.pop(0)
        if url in seen:
            continue
        response = client.get(url)
        body = response.content.decode("utf-8", "replace")
        seen[url] = (response.status_code, body)
        if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
            continue
        parser = _Links()
        parser.feed(body)
        for link in parser.links:
            target = urlparse(urljoin(url, link))
            if target.netloc or target.path.startswith("/static/"):
                continue
            path = target.path + (f"?{target.query}" if target.query else "")
            if path not in seen:
                queue.append(path)
    return seen


@pytest.fixture
def two_releases(db):
    world, published = frozen_release(publish=True)
    draft_world, frozen = frozen_release(name="Unpublished-Bench")
    completed_run(
        release=published,
        source="upload",
        label="shown-model",
        summary={
            "k": [1],
            "pass": {"1": {"value": 0.5, "low": 0.25, "high": 0.75, "n": 3}},
            "breakdown": {"origin": {"evolved": {"value": 0.6, "low": 0.5, "high": 0.7, "n": 2}}},
            "contamination": {"flagged": 0, "clean_pass1": None},
        },
    )
    LeaderboardRun.objects.create(release=published, source="upload", label="queued-model")
    return world, published, frozen


def test_anonymous_crawl_sees_published_data_only_and_never_hidden_tests(two_releases):
    world, published, frozen = two_releases
    pages = crawl(Client(), reverse("releases:public_list"))
    ok = {url: body for url, (status, body) in pages.items() if status == 200}
    slug, version = published.benchmark.slug, published.version
    assert reverse("releases:public_leaderboard", args=[slug, version]) in ok
    item_pages = [u for u in ok if "/items/" in u]
    assert len(item_pages) == published.item_count
    everything = "\n".join(ok.values())
    assert HIDDEN_DIGITS not in everything
    assert HIDDEN_MARKER not in everything
    assert "Unpublished-Bench" not in everything
    assert "queued-model" not in everything
    assert "shown-model" in everything and "50.0%" in everything and "[25.0%, 75.0%]" in everything
    for key in ("E-OK", "S2"):
        assert world.problem(key).statement.split(".")[0] in everything
    # Gate failures and unpublished problems are nowhere.
    assert world.problem("E-LOWQ").public_id not in everything
    # No curator page was reachable or, if linked, it asked for a login.
    assert not any(u.startswith("/curate/") for u in ok)


def test_unpublished_releases_and_curator_pages_are_closed_to_anonymous_visitors(two_releases):
    _, published, frozen = two_releases
    client = Client()
    slug, version = frozen.benchmark.slug, frozen.version
    for name in ("public_detail", "public_leaderboard", "public_card"):
        assert client.get(reverse(f"releases:{name}", args=[slug, version])).status_code == 404
    some_item = frozen.items.first().public_id
    url = reverse("releases:public_item", args=[slug, version, some_item])
    assert client.get(url).status_code == 404
    for url in (
        reverse("releases:curate_list"),
        reverse("releases:curate_detail", args=[published.pk]),
        reverse("releases:release_export", args=[published.pk, "jsonl"]),
    ):
        response = client.get(url)
        assert response.status_code == 302 and "/login/" in response["Location"]
    assert client.post(reverse("releases:release_freeze", args=[frozen.pk])).status_code == 302
    api = client.get("/api/releases").json()
    assert [r["benchmark"] for r in api] == [published.benchmark.name]
    assert client.get(f"/api/releases/{frozen.pk}/leaderboard").status_code == 404
    assert client.get(f"/api/releases/{published.pk}/export/jsonl").status_code == 401


def test_full_exports_need_the_curator_role(two_releases, personas):
    _, published, _ = two_releases
    url = reverse("releases:release_export", args=[published.pk, "jsonl"])
    assert personas.reviewer_a.client.get(url).status_code == 403
    response = personas.curator.client.get(url)
    assert response.status_code == 200
    assert HIDDEN_DIGITS in response.content.decode()
    assert personas.admin.client.get(url).status_code == 200
    api = personas.curator.client.get(f"/api/releases/{published.pk}/export/lcb")
    assert api.status_code == 200
    assert (
        personas.reviewer_a.client.get(f"/api/releases/{published.pk}/export/lcb").status_code
        == 403
    )


def test_the_public_card_shows_counts_hash_and_changelog(two_releases):
    _, published, _ = two_releases
    slug, version = published.benchmark.slug, published.version
    body = Client().get(reverse("releases:public_detail", args=[slug, version])).content.decode()
    assert published.content_hash in body
    assert "First release" in body
    card = Client().get(reverse("releases:public_card", args=[slug, version])).content.decode()
    assert card.startswith("---\nlicense: cc-by-4.0")


def test_the_leaderboard_sorts_by_the_chosen_column(two_releases):
    _, published, _ = two_releases
    completed_run(
        release=published,
        source="upload",
        label="aardvark-model",
        summary={"k": [1], "pass": {"1": {"value": 0.9, "low": 0.8, "high": 1.0, "n": 3}}},
    )
    url = reverse("releases:public_leaderboard", args=[published.benchmark.slug, published.version])

    def rows(query: str) -> list[str]:
        return re.findall(r'data-model="([^"]+)"', Client().get(url + query).content.decode())

    assert rows("?sort=pass1&dir=desc") == ["aardvark-model", "shown-model"]
    assert rows("?sort=pass1&dir=asc") == ["shown-model", "aardvark-model"]
    assert rows("?sort=model&dir=asc") == ["aardvark-model", "shown-model"]


def test_errata_are_fixed_in_the_next_patch_version_with_a_changelog(db, personas):
    world, release = frozen_release(publish=True)
    bad = world.problem("E-OK")
    services.erratum_create(
        release=release,
        item_public_id=bad.public_id,
        kind="tests",
        description="The large test expects the wrong sum.",
        by=personas.curator.user,
    )
    test = bad.tests.get(tier="large")
    test.output = test.output.strip() + "0\n"
    test.save()
    patch = services.release_next(release=release)
    services.gate_run_create(release=patch)
    patch = services.release_publish(release=services.release_freeze(release=patch))
    assert patch.version == "1.0.1"
    erratum = release.errata.get()
    assert erratum.fixed_in == patch and erratum.resolution == "changed"
    page = Client().get(reverse("releases:public_detail", args=[patch.benchmark.slug, "1.0.1"]))
    body = page.content.decode()
    assert "Against v1.0.0: 0 added, 0 removed, 1 changed, 2 unchanged." in body
    assert f"Fixes erratum on <code>{bad.public_id}</code>" in body
    old = Client().get(reverse("releases:public_detail", args=[release.benchmark.slug, "1.0.0"]))
    assert "fixed in v1.0.1" in old.content.decode()
