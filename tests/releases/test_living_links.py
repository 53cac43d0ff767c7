"""The living loop a curator can drive from the start: the living page is linked from a
published release before any re-measurement, and a pending re-evolution names its campaign as a
link for curators (issue: linked from nowhere until a re-measurement completed)."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from releases.models import ReEvolution

from .helpers import frozen_release

pytestmark = pytest.mark.django_db


def test_a_published_release_links_its_living_page_before_any_remeasurement():
    cache.clear()
    _, release = frozen_release(publish=True)
    bench = release.benchmark
    html = Client().get(reverse("releases:public_detail", args=[bench.slug, release.version]))
    living = reverse("releases:living", args=[bench.slug])
    assert f'<p id="living-link"><a href="{living}">Living benchmark</a>' in html.content.decode()
    assert Client().get(living).status_code == 200
    listing = Client().get(reverse("releases:public_list")).content.decode()
    assert f'<a class="button living-link" href="{living}">Living benchmark</a>' in listing


def test_a_pending_reevolution_links_its_campaign_for_curators(personas):
    cache.clear()
    world, release = frozen_release(publish=True)
    ReEvolution.objects.create(release=release, campaign=world.campaign, retired={"X": "why"})
    living = reverse("releases:living", args=[release.benchmark.slug])
    campaign_url = reverse("evolution:campaign_detail", args=[world.campaign.pk])
    page = personas.curator.client.get(living).content.decode()
    assert f'<a href="{campaign_url}">{world.campaign.name}</a>' in page
    assert campaign_url not in Client().get(living).content.decode()


def test_a_reevolution_draft_inherits_the_source_campaign_s_settings(transactional_db):
    """(issue: it took the defaults, not the settings the problems were evolved with.)"""
    from evolution.models import Campaign
    from releases import living

    from .living_support import remeasured_release

    cache.clear()
    world, release = remeasured_release()
    source = {**world.campaign.settings, "max_iters_per_seed": 2, "execution_timeout": 3.0}
    Campaign.objects.filter(pk=world.campaign.pk).update(settings=source)
    reevolution = living.reevolution_create(release=release)
    settings = reevolution.campaign.settings
    assert (settings["max_iters_per_seed"], settings["execution_timeout"]) == (2, 3.0)
    assert reevolution.campaign.state == "draft"
