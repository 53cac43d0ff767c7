"""Heatmap and analytics pages and their JSON / CSV endpoints over real campaign rows."""

from __future__ import annotations

import csv
import gzip
import io
import json

import pytest
from django.core.cache import cache
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from evolution.benchevolver.analytics.selectors import CHARTS
from evolution.benchevolver.models import Candidate, Lineage
from evolution.templatetags import charts
from evolution.views.assets import PLOTLY_VERSION

from .data import build_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def built(db):
    return build_campaign(seeds=9, rounds=4, rng_seed=3)


def _urls(pk: int) -> list[str]:
    urls = [
        reverse("evolution:campaign_heatmap", args=[pk]),
        reverse("evolution:campaign_heatmap_json", args=[pk]),
        reverse("evolution:campaign_heatmap_csv", args=[pk]),
        reverse("evolution:campaign_analytics", args=[pk]),
    ]
    for name in CHARTS:
        urls.append(reverse("evolution:campaign_chart_json", args=[pk, name]))
        urls.append(reverse("evolution:campaign_chart_csv", args=[pk, name]))
    return urls


def test_curators_and_admins_see_every_page_and_endpoint(personas, built):
    for persona in (personas.admin, personas.curator):
        for url in _urls(built.campaign.pk):
            assert persona.client.get(url).status_code == 200, url


def test_reviewers_are_refused_and_anonymous_visitors_sent_to_log_in(personas, built):
    for url in _urls(built.campaign.pk):
        assert personas.reviewer_a.client.get(url).status_code == 403, url
        response = personas.anonymous.client.get(url)
        assert response.status_code == 302 and "/login/" in response["Location"], url


def test_campaign_page_links_to_heatmap_and_analytics(personas, built):
    page = personas.curator.client.get(
        reverse("evolution:campaign_detail", args=[built.campaign.pk])
    )
    assert reverse("evolution:campaign_heatmap", args=[built.campaign.pk]) in page.text
    assert reverse("evolution:campaign_analytics", args=[built.campaign.pk]) in page.text


def test_heatmap_page_is_a_shell_loading_local_plotly_and_its_data(personas, built):
    page = personas.curator.client.get(
        reverse("evolution:campaign_heatmap", args=[built.campaign.pk])
    )
    assert charts.plotly_url() in page.text and "/assets/plotly-cartesian-" in page.text
    assert "cdn" not in page.text.lower()
    assert reverse("evolution:campaign_heatmap_json", args=[built.campaign.pk]) in page.text
    assert "/candidates/{id}/" in page.text


def test_heatmap_json_has_one_row_per_seed_with_its_rounds(personas, built):
    response = personas.curator.client.get(
        reverse("evolution:campaign_heatmap_json", args=[built.campaign.pk])
    )
    data = response.json()
    assert data["total"] == 9 and len(data["rows"]) == 9
    by_lineage = {r["lineage"]: r for r in data["rows"]}
    for cand in Candidate.objects.filter(lineage__campaign=built.campaign):
        cell = next(c for c in by_lineage[cand.lineage_id]["cells"] if c["r"] == cand.round)
        assert cell["id"] == cand.pk and cell["d"] == cand.decision
        assert (cell["p"], cell["a"]) == (cand.passes, cand.attempts)
    for lineage in built.lineages:
        row = by_lineage[lineage.pk]
        assert row["seed"]["p"] == lineage.seed_passes
        accepted_rounds = sorted(
            c.round
            for c in built.candidates
            if c.lineage_id == lineage.pk and c.decision == "accepted"
        )
        assert row["path"] == [0, *accepted_rounds]


def test_heatmap_json_filters_sorts_and_pages(personas, built):
    url = reverse("evolution:campaign_heatmap_json", args=[built.campaign.pk])
    client = personas.curator.client
    hard = client.get(url, {"difficulty": "hard"}).json()
    assert hard["total"] == 3 and {r["difficulty"] for r in hard["rows"]} == {"hard"}
    accepted = client.get(url, {"outcome": "accepted"}).json()
    assert all(r["outcome"] == "accepted" for r in accepted["rows"])
    gains = [r["gain"] for r in client.get(url, {"sort": "gain"}).json()["rows"]]
    assert gains == sorted(gains, reverse=True)
    page = client.get(url, {"limit": 4, "offset": 4}).json()
    assert page["total"] == 9 and [r["position"] for r in page["rows"]] == [4, 5, 6, 7]
    family = page["options"]["families"][0]
    assert all(family in r["families"] for r in client.get(url, {"family": family}).json()["rows"])


@pytest.mark.parametrize(
    "params, message",
    [
        ({"sort": "nonsense"}, "sort must be one of"),
        ({"outcome": "won"}, "outcome must be one of"),
        ({"limit": "ten"}, "limit must be a whole number"),
        ({"offset": "-1"}, "offset must be between"),
    ],
)
def test_heatmap_json_rejects_bad_parameters_by_name(personas, built, params, message):
    url = reverse("evolution:campaign_heatmap_json", args=[built.campaign.pk])
    response = personas.curator.client.get(url, params)
    assert response.status_code == 400 and message in response.text


def test_unknown_campaign_or_chart_is_404(personas, built):
    client = personas.curator.client
    assert client.get(reverse("evolution:campaign_heatmap_json", args=[987654])).status_code == 404
    assert client.get(reverse("evolution:campaign_analytics", args=[987654])).status_code == 404
    bad_chart = reverse("evolution:campaign_chart_json", args=[built.campaign.pk, "nope"])
    assert client.get(bad_chart).status_code == 404


def test_heatmap_csv_has_every_matching_cell_not_only_one_page(personas, built):
    url = reverse("evolution:campaign_heatmap_csv", args=[built.campaign.pk])
    response = personas.curator.client.get(url, {"difficulty": "easy", "limit": 1})
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    easy = [lin for lin in built.lineages if lin.seed.origin_difficulty == "easy"]
    expected = len(easy) + sum(
        1 for c in built.candidates if c.lineage_id in {lin.pk for lin in easy}
    )
    assert len(rows) == expected
    assert {r["seed_difficulty"] for r in rows} == {"easy"}


def test_chart_csv_matches_its_json(personas, built):
    client = personas.curator.client
    pk = built.campaign.pk
    data = client.get(reverse("evolution:campaign_chart_json", args=[pk, "pass_rates"])).json()
    rows = list(
        csv.DictReader(
            io.StringIO(
                client.get(
                    reverse("evolution:campaign_chart_csv", args=[pk, "pass_rates"])
                ).content.decode()
            )
        )
    )
    assert [(r["model"], r["difficulty"]) for r in rows] == [
        (r["model"], r["difficulty"]) for r in data["rows"]
    ]


def test_analytics_page_renders_yield_table_and_cost_without_javascript(personas, built):
    page = personas.curator.client.get(
        reverse("evolution:campaign_analytics", args=[built.campaign.pk])
    )
    assert page.status_code == 200
    accepted = sum(1 for c in built.candidates if c.decision == "accepted")
    assert page.context["cost"]["accepted"] == accepted
    assert 'id="yield-table"' in page.text
    for name in CHARTS:
        if name != "yield":
            assert f'data-chart="{name}"' in page.text


def test_pass_rates_use_the_panel_models_and_seed_attempts(personas, built):
    data = personas.curator.client.get(
        reverse("evolution:campaign_chart_json", args=[built.campaign.pk, "pass_rates"])
    ).json()
    names = {e.name for e in built.endpoints}
    assert names <= set(data["models"])
    seeds = sum(lin.seed_attempts for lin in built.lineages)
    pooled = [r for r in data["rows"] if r["model"] == "all models (pooled)"]
    assert sum(r["seed_attempts"] for r in pooled) == seeds
    per_model = [r for r in data["rows"] if r["model"] in names]
    assert sum(r["seed_attempts"] for r in per_model) == seeds


def test_data_is_cached_until_the_campaign_advances(personas, built):
    client = personas.curator.client
    url = reverse("evolution:campaign_chart_json", args=[built.campaign.pk, "funnel"])
    first = client.get(url)
    with CaptureQueriesContext(connection) as cold:
        client.get(url, HTTP_IF_NONE_MATCH='"other"')
    before = first.json()["decided"]
    lineage = built.lineages[0]
    Candidate.objects.create(
        lineage=lineage,
        round=99,
        parent=lineage.seed,
        decision="invalid",
        decision_reason="brute force disagrees",
        decided_at=timezone.now(),
    )
    after = client.get(url).json()
    assert after["decided"] == before + 1
    assert first["ETag"] != client.get(url)["ETag"]
    # Second read of the same state: the fingerprint query only, no chart query.
    with CaptureQueriesContext(connection) as warm:
        client.get(url, HTTP_IF_NONE_MATCH='"other"')
    assert len(warm) == len(cold)


def test_a_browser_holding_current_data_gets_304(personas, built):
    client = personas.curator.client
    url = reverse("evolution:campaign_heatmap_json", args=[built.campaign.pk])
    etag = client.get(url)["ETag"]
    assert client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304
    assert client.get(url, {"sort": "gain"}, HTTP_IF_NONE_MATCH=etag).status_code == 200


def test_plotly_is_served_from_the_package_with_long_cache_headers(client):
    url = reverse("evolution:plotly_js", args=[PLOTLY_VERSION])
    response = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    assert response.status_code == 200
    assert response["Content-Encoding"] == "gzip"
    assert "max-age=31536000" in response["Cache-Control"]
    plain = client.get(url)
    assert plain.content.startswith(b"/**") or b"plotly" in plain.content[:2000].lower()
    assert len(plain.content) > 1_000_000
    assert client.get(url, HTTP_IF_NONE_MATCH=response["ETag"]).status_code == 304
    assert client.get(reverse("evolution:plotly_js", args=["0.0.1"])).status_code == 404


# Queries per request on a cold cache: 3 for the session, the user and their roles, 1 for the
# campaign with its fingerprint, then each chart's own reads (no review exists here, so the
# review adapter stops after its first query; the heatmap's first page reads its own rows and
# two grouped summaries, test_heatmap_first_page.py). A warm cache leaves the first 4 only.
EXPECTED_QUERIES = {
    "heatmap": 8,
    "analytics_page": 9,
    "pass_rates": 7,
    "yield": 7,
    "funnel": 5,
    "cost": 6,
    "families": 5,
    "categories": 7,
    "ratings": 7,
    "new_categories": 7,
}


def _endpoints(pk: int) -> dict[str, str]:
    return {
        "heatmap": reverse("evolution:campaign_heatmap_json", args=[pk]),
        "analytics_page": reverse("evolution:campaign_analytics", args=[pk]),
        **{n: reverse("evolution:campaign_chart_json", args=[pk, n]) for n in CHARTS},
    }


@pytest.mark.parametrize("size", ["small", "large"])
def test_query_count_is_pinned_whatever_the_campaign_size(
    personas, django_assert_num_queries, size
):
    if size == "small":
        built = build_campaign(seeds=4, rounds=2, rng_seed=11, tag="small")
    else:
        built = build_campaign(seeds=60, rounds=10, rng_seed=12, tag="large", full_rounds=True)
    client = personas.curator.client
    assert set(EXPECTED_QUERIES) == set(_endpoints(built.campaign.pk))
    for name, url in _endpoints(built.campaign.pk).items():
        cache.clear()
        with django_assert_num_queries(EXPECTED_QUERIES[name]):
            assert client.get(url).status_code == 200, name
        with django_assert_num_queries(4):
            assert client.get(url).status_code == 200, name
    heatmap = client.get(_endpoints(built.campaign.pk)["heatmap"], {"limit": 0}).json()
    assert heatmap["total"] == len(built.lineages)
    assert sum(len(r["cells"]) for r in heatmap["rows"]) == len(built.candidates)


def test_heatmap_follows_engine_updates_that_bypass_updated_at(personas, built):
    """The engine records a calibration with a conditional UPDATE (no auto_now) and counts the
    step in steps_done; the cached heatmap must still change."""
    client = personas.curator.client
    url = reverse("evolution:campaign_heatmap_json", args=[built.campaign.pk])
    lineage = built.lineages[0]
    assert client.get(url).json()["rows"][0]["seed"]["p"] == lineage.seed_passes
    Lineage.objects.filter(pk=lineage.pk).update(seed_passes=0, steps_done=F("steps_done") + 1)
    assert client.get(url).json()["rows"][0]["seed"]["p"] == 0


def test_the_chart_data_is_gzipped_when_the_browser_accepts_it(personas, built):
    """The heatmap and chart JSON go gzipped to a browser that accepts it (the heatmap page
    fetches 0.5 MB of JSON for 200 seeds); the same data as sent plainly, from the cache the
    second time."""
    client = personas.curator.client
    pk = built.campaign.pk
    for url in (
        reverse("evolution:campaign_heatmap_json", args=[pk]) + "?limit=0",
        reverse("evolution:campaign_chart_json", args=[pk, "funnel"]),
    ):
        plain = client.get(url)
        assert "Content-Encoding" not in plain and "Accept-Encoding" in plain["Vary"]
        zipped = client.get(url, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
        assert zipped["Content-Encoding"] == "gzip" and "Accept-Encoding" in zipped["Vary"]
        assert json.loads(gzip.decompress(zipped.content)) == plain.json()
        assert zipped["ETag"] == plain["ETag"]
        assert client.get(url, HTTP_ACCEPT_ENCODING="gzip").content == zipped.content
    heatmap = reverse("evolution:campaign_heatmap_json", args=[pk]) + "?limit=0"
    assert len(client.get(heatmap, HTTP_ACCEPT_ENCODING="gzip").content) * 4 < len(
        client.get(heatmap).content
    )
