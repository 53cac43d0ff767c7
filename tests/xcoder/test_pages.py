"""X-Coder pages: roles, the campaign page (counts before/after, tree, tasks), the task page
with its vote matrix, creation with clear errors, and lifecycle controls."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evolution.models import Campaign
from evolution.models.campaigns import CampaignState
from evolution.streams.runner import run_inline
from xcoder import services
from xcoder.models import SynthTask

from .helpers import SCRIPTED_SETTINGS, Responder, base_table, endpoint, seed_set

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def finished(fake_server):
    fake_server.responder = Responder(base_table())
    campaign = services.xcoder_campaign_create(
        name="pages",
        seed_set=seed_set(),
        generator_endpoint=endpoint(fake_server, "generator"),
        solver_endpoints=[endpoint(fake_server, "solver-a"), endpoint(fake_server, "solver-b")],
        settings={"num_tasks": 1, "style_mix": {"codeforces": 100}, **SCRIPTED_SETTINGS},
    )
    Campaign.objects.filter(pk=campaign.pk).update(state=CampaignState.QUEUED)
    return run_inline(campaign_id=campaign.pk, max_steps=60)


def test_reviewers_and_visitors_cannot_see_xcoder_pages(personas, finished):
    urls = [
        reverse("xcoder:campaign_list"),
        reverse("xcoder:campaign_detail", args=[finished.pk]),
        reverse("xcoder:task_detail", args=[finished.pk, 0]),
    ]
    for url in urls:
        assert personas.reviewer_a.client.get(url).status_code == 403
        assert personas.anonymous.client.get(url).status_code == 302
        assert personas.curator.client.get(url).status_code == 200


def test_the_campaign_page_shows_counts_tree_and_tasks(personas, finished):
    page = personas.curator.client.get(reverse("xcoder:campaign_detail", args=[finished.pk]))
    html = page.content.decode()
    assert 'id="feature-counts"' in html and "×1.50" in html  # problem type 2 -> 3
    assert "tournament selection" in html and "depth, round 1" in html
    assert "Lantern Festival Budget" in html and "accepted" in html
    assert "Launch" not in html  # curators watch, admins control


def test_the_task_page_shows_the_vote_matrix(personas, finished):
    page = personas.curator.client.get(reverse("xcoder:task_detail", args=[finished.pk, 0]))
    html = page.content.decode()
    assert 'id="vote-matrix"' in html
    assert (
        html.count('<td class="bad">✗</td>') == 3
    )  # the wrong candidate loses the three tests with k > 3
    assert "solver-a/0 ★" in html
    assert "refused</b>: 2 code blocks" in html
    assert "Weighted score on the golden suite" in html


def test_the_task_page_title_is_plain_text_and_its_style_is_in_the_page(personas, finished):
    page = personas.curator.client.get(reverse("xcoder:task_detail", args=[finished.pk, 0]))
    html = page.content.decode()
    title = html.split("<title>", 1)[1].split("</title>", 1)[0]
    assert title == f"Task 0 · {finished.name} · BenchForge"
    assert html.count(".tree, .tree ul") == 1  # the task page's stylesheet, once, in the body


def test_an_unknown_task_or_campaign_is_404(personas, finished):
    client = personas.curator.client
    assert client.get(reverse("xcoder:task_detail", args=[finished.pk, 9])).status_code == 404
    assert client.get(reverse("xcoder:campaign_detail", args=[99999])).status_code == 404


def test_an_admin_creates_a_campaign_and_bad_settings_are_named(personas, fake_server):
    seeds = seed_set()
    gen, solver = endpoint(fake_server, "generator"), endpoint(fake_server, "solver-a")
    data = {
        "name": "from the form",
        "seed_set": seeds.pk,
        "generator_endpoint": gen.pk,
        "solver_endpoints": [solver.pk],
        "setting_holdout_fraction": "1.5",
        "setting_candidates_per_endpoint": "4",
    }
    client = personas.admin.client
    page = client.post(reverse("xcoder:campaign_new"), data)
    assert page.status_code == 200
    assert "must be strictly between 0 and 1" in page.content.decode()
    data["setting_holdout_fraction"] = "0.5"
    page = client.post(reverse("xcoder:campaign_new"), data)
    campaign = Campaign.objects.get(name="from the form")
    assert page.status_code == 302 and campaign.kind == "xcoder"
    assert campaign.settings["candidates_per_endpoint"] == 4
    assert (
        personas.curator.client.post(
            reverse("xcoder:campaign_control", args=[campaign.pk, "launch"])
        ).status_code
        == 403
    )
    client.post(reverse("xcoder:campaign_control", args=[campaign.pk, "launch"]))
    campaign.refresh_from_db()
    assert campaign.state == CampaignState.QUEUED
    client.post(reverse("xcoder:campaign_control", args=[campaign.pk, "pause"]))
    campaign.refresh_from_db()
    assert campaign.state == CampaignState.PAUSED


def test_the_evolution_campaign_list_links_to_xcoder(personas):
    page = personas.curator.client.get(reverse("evolution:campaign_list"))
    assert reverse("xcoder:campaign_list") in page.content.decode()


def test_a_task_page_before_verification_has_no_matrix(personas, finished):
    SynthTask.objects.filter(xcoder_id=finished.pk).update(verification={})
    page = personas.curator.client.get(reverse("xcoder:task_detail", args=[finished.pk, 0]))
    assert 'id="vote-matrix"' not in page.content.decode()


def test_the_evolution_campaign_page_redirects_to_the_xcoder_page(personas, finished):
    page = personas.curator.client.get(reverse("evolution:campaign_detail", args=[finished.pk]))
    assert page.status_code == 302
    assert page.url == reverse("xcoder:campaign_detail", args=[finished.pk])


def test_the_campaign_page_polls_its_live_section_while_active(personas, finished):
    url = reverse("xcoder:campaign_detail", args=[finished.pk])
    client = personas.curator.client
    assert "hx-get" not in client.get(url).content.decode()  # completed: nothing moves
    Campaign.objects.filter(pk=finished.pk).update(state=CampaignState.RUNNING)
    assert f'hx-get="{url}"' in client.get(url).content.decode()
    poll = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert poll.lstrip().startswith('<section id="live"') and "<h1>" not in poll
    assert 'id="campaign-state">running<' in poll


def test_the_campaign_page_maps_task_diversity_with_clusters(personas, finished):
    """B.4 done differently: the gated statements on a 2-D map, K-means clusters and centroid
    distances, labelled with the method."""
    from tests.xcoder.test_diversity import GEOMETRY, GRAPHS

    xc = finished.xcoder
    url = reverse("xcoder:campaign_detail", args=[finished.pk])
    html = personas.curator.client.get(url).content.decode()
    assert 'id="diversity"' in html and "Needs at least two tasks" in html
    for offset, statement in enumerate(GRAPHS + GEOMETRY, start=1):
        SynthTask.objects.create(
            xcoder=xc, index=offset, style="codeforces", status="written", statement=statement
        )
    SynthTask.objects.create(
        xcoder=xc, index=99, style="codeforces", status="rejected", statement=GRAPHS[0]
    )
    html = personas.curator.client.get(url).content.decode()
    assert 'id="diversity-map"' in html
    assert html.count('class="task-point"') == 1 + 8  # the accepted task and the 8 written
    assert "TF-IDF + truncated SVD" in html and "not comparable" in html
    assert "centroid distance mean" in html
    start = html.index('id="diversity-clusters"')
    table = html[start : html.index("</table>", start)]
    sizes = [int(cell.split("</td>")[0]) for cell in table.split("<td>")[2::2]]
    assert len(sizes) >= 2 and sum(sizes) == 9
