"""The campaign pages: who may see them, and what they show."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline
from evosyn import services
from tests.support.answers import fenced

from .helpers import CRASHING, FIGURE_3, SMALL_SETTINGS, respond, script

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished(world, fake_server):
    seed_set, endpoint = world
    respond(fake_server, script(strategist=[fenced(CRASHING), fenced(FIGURE_3)]))
    campaign = services.evosyn_campaign_create(
        name="evosyn pages", seed_set=seed_set, endpoint=endpoint, settings=SMALL_SETTINGS
    )
    campaign_services.campaign_launch(campaign_id=campaign.pk)
    return run_inline(campaign_id=campaign.pk, max_steps=60)


def test_curators_see_scores_strategies_and_prune_reasons(personas, finished):
    page = personas.curator.client.get(reverse("evosyn:campaign_detail", args=[finished.pk]))
    assert page.status_code == 200
    body = page.content.decode()
    assert "zero variance" in body and "identical solutions" in body
    assert "Criterion-1" in body and "<code>evosyn</code>" in body
    scores = personas.curator.client.get(reverse("evosyn:campaign_scores", args=[finished.pk]))
    assert scores.json()["iterations"] == [0, 1, 2]
    assert scores.json()["best"] == [0.0, 0.0, 1.0]
    source = personas.admin.client.get(reverse("evosyn:strategy_source", args=[finished.pk, 3]))
    assert b"testing_quality" in source.content


def test_reviewers_and_visitors_cannot_open_the_pages(personas, finished):
    for name in ("reviewer_a", "anonymous"):
        client = personas.all()[name].client
        response = client.get(reverse("evosyn:campaign_detail", args=[finished.pk]))
        assert response.status_code in (302, 403)
        response = client.get(reverse("evosyn:campaign_list"))
        assert response.status_code in (302, 403)


def test_a_curator_builds_and_downloads_the_control_dataset(personas, finished):
    client = personas.curator.client
    response = client.post(reverse("evosyn:control_build", args=[finished.pk]), {"rng_seed": "3"})
    assert response.status_code == 302
    control = finished.evosyn.controls.get()
    download = client.get(reverse("evosyn:control_download", args=[finished.pk, control.pk]))
    assert download.status_code == 200
    assert download.content.decode().count("\n") == len(control.items) == 1


def test_a_curator_builds_the_relaxed_dataset_from_the_page(personas, finished):
    client = personas.curator.client
    page = client.get(reverse("evosyn:campaign_detail", args=[finished.pk])).content.decode()
    assert '<option value="relaxed">D^relaxed</option>' in page
    response = client.post(
        reverse("evosyn:control_build", args=[finished.pk]), {"variant": "relaxed"}, follow=True
    )
    assert response.status_code == 200
    control = finished.evosyn.controls.get()
    # The kept problem, the zero-variance one and the identical-solutions one.
    assert control.variant == "relaxed" and len(control.items) == 3
    download = client.get(reverse("evosyn:control_download", args=[finished.pk, control.pk]))
    assert "relaxed" in download["Content-Disposition"]
    assert download.content.decode().count("\n") == 3
    bad = client.post(
        reverse("evosyn:control_build", args=[finished.pk]), {"variant": "nope"}, follow=True
    )
    assert [m.level_tag for m in bad.context["messages"]][-1] == "error"
    assert finished.evosyn.controls.count() == 1


def test_the_seed_table_counts_solutions_passing_the_human_tests(personas, finished):
    # Two of the four scripted seed solutions are correct: the column shows 2 of 4, not M.
    seed = finished.evosyn.instances.get(role="seed")
    assert seed.human == [True, True, False, False]
    page = personas.curator.client.get(reverse("evosyn:campaign_detail", args=[finished.pk]))
    body = page.content.decode()
    assert '<td class="human-passing">2 of 4</td>' in body
    assert "<td>4 sampled</td>" not in body


def test_the_campaign_page_polls_its_live_section_while_active(personas, finished):
    from evolution.models import Campaign

    url = reverse("evosyn:campaign_detail", args=[finished.pk])
    client = personas.curator.client
    assert "hx-get" not in client.get(url).content.decode()
    Campaign.objects.filter(pk=finished.pk).update(state="running")
    assert f'hx-get="{url}"' in client.get(url).content.decode()
    poll = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert poll.lstrip().startswith('<section id="live"') and "<h1>" not in poll
    assert '<b id="state">running</b>' in poll and "seed instances scored" in poll
