"""The heatmap's first page (seed order, no filter: what the page opens with) is read without
building every row: only its own lineages and their candidates, the count and the filters'
choices by grouped queries. It is exactly the page the full build gives."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from evolution.benchevolver.analytics import selectors
from evolution.benchevolver.models import Lineage
from evolution.models import Problem

from .data import build_campaign

pytestmark = pytest.mark.django_db

PLAIN = (
    selectors.HeatmapQuery(),
    selectors.HeatmapQuery(offset=5, limit=7),
    selectors.HeatmapQuery(offset=25, limit=10),  # past the end: a short page
)


@pytest.fixture
def campaign():
    built = build_campaign(seeds=30, rounds=5, rng_seed=21, tag="first-page")
    # Every outcome and a seed without a difficulty, so each filter choice is exercised.
    lineages = built.lineages
    for lineage, state in zip(lineages[:3], ("evolving", "failed", "pending"), strict=True):
        lineage.candidates.all().delete()
        Lineage.objects.filter(pk=lineage.pk).update(state=state)
    Problem.objects.filter(pk=lineages[4].seed_id).update(origin_difficulty="")
    return built.campaign


def _fresh(pk: int):
    return selectors.campaign_for_analytics(pk=pk)


@pytest.mark.parametrize("query", PLAIN)
def test_a_plain_page_is_the_full_builds_page_without_building_every_row(campaign, query):
    cache.clear()
    fast = selectors.heatmap_page(campaign=_fresh(campaign.pk), query=query)
    # The rows of the whole campaign were not built (nor cached) to answer it.
    assert cache.get(selectors._heatmap_key(_fresh(campaign.pk))) is None
    selectors.heatmap_data(campaign=_fresh(campaign.pk))  # every row built and cached
    full = selectors.heatmap_page(campaign=_fresh(campaign.pk), query=query)
    assert fast == full
    assert full["total"] == 30 and len(full["rows"]) == min(query.limit, 30 - query.offset)
    assert set(full["options"]["outcomes"]) >= {"running", "failed"}
    assert "" in full["options"]["difficulties"]


def test_a_plain_page_costs_four_queries_whatever_the_campaign_size(
    campaign, django_assert_num_queries
):
    larger = build_campaign(seeds=120, rounds=10, rng_seed=22, tag="larger", full_rounds=True)
    for pk in (campaign.pk, larger.campaign.pk):
        cache.clear()
        c = _fresh(pk)
        with django_assert_num_queries(4):
            page = selectors.heatmap_page(campaign=c, query=selectors.HeatmapQuery(limit=20))
        assert len(page["rows"]) == 20


def test_filtered_or_sorted_pages_still_read_every_row(campaign):
    cache.clear()
    query = selectors.HeatmapQuery(sort="gain")
    page = selectors.heatmap_page(campaign=_fresh(campaign.pk), query=query)
    assert cache.get(selectors._heatmap_key(_fresh(campaign.pk))) is not None
    assert page["total"] == 30
