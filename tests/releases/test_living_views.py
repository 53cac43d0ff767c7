"""The living benchmark on the pages: the problem page's difficulty plot, the saturated share
on the release page and the public leaderboard, the living-benchmark page and its curator
actions (with clear errors)."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from evolution.models import Campaign
from evolution.templatetags import charts
from releases.models import PanelSeat, ReEvolution, Remeasurement
from tests.support.fake_openai import FakeOpenAI

from .living_support import endpoint, remeasured_release


@pytest.fixture
def measured(transactional_db):
    return remeasured_release()


def test_the_problem_page_plots_its_dated_difficulty_and_saturation(measured):
    world, release = measured
    pid = world.problem("E-OK").public_id
    url = reverse("releases:public_item", args=[release.benchmark.slug, release.version, pid])
    html = public_get(url)
    assert html.count('class="history-point') == 2
    assert html.count('class="history-point saturated"') == 1  # 0.75 then 0.875
    assert "pass@1 0.88 [" in html
    assert "saturated</span> since" in html and "by strong" in html
    # The same history as a plotly figure (the SVG above stays as the page without JavaScript).
    figure = json.loads(re.search(r'id="history-figure"[^>]*>(.*?)</script>', html, re.S)[1])
    assert figure["data"][0]["y"] == [0.75, 0.875]
    assert 'data-figure="history-figure"' in html and 'class="plot-fallback"' in html
    assert f'src="{charts.plotly_url()}"' in html and "releases/living_plots" in html
    s2 = world.problem("S2").public_id
    html = public_get(
        reverse("releases:public_item", args=[release.benchmark.slug, release.version, s2])
    )
    assert "saturated</span> since" not in html and html.count('class="history-point"') == 2


def test_release_page_and_leaderboard_show_the_saturated_share(measured):
    _, release = measured
    args = [release.benchmark.slug, release.version]
    for name in ("public_detail", "public_leaderboard"):
        html = public_get(reverse(f"releases:{name}", args=args))
        assert "2 of 3 problems saturated" in html, name
        assert "(67%" in html


def test_the_living_page_lists_releases_remeasurements_and_pending_campaigns(measured, personas):
    world, release = measured
    url = reverse("releases:living", args=[release.benchmark.slug])
    html = public_get(url)
    assert html.count('class="remeasurement"') == 2
    assert html.count('class="saturation-point"') == 2
    assert html.count('class="saturation-flag"') == 2
    assert 'data-figure="saturation-figure"' in html and 'id="saturation-figure"' in html
    assert "Re-evolve saturated problems" not in html  # anonymous: no curator actions

    curator = personas.curator.client
    reevolve = reverse("releases:living_reevolve", args=[release.benchmark.slug, release.pk])
    assert personas.anonymous.client.post(reevolve).status_code == 302  # to the login page
    assert not ReEvolution.objects.exists()
    page = curator.post(reevolve, follow=True).content.decode()
    campaign = Campaign.objects.get(reevolution__release=release)
    assert "created from 2 saturated problem(s)" in page
    assert 'class="reevolution"' in page and campaign.name in page
    again = curator.post(reevolve, follow=True).content.decode()
    assert "no saturated problem left to re-evolve" in again


def test_adding_a_model_from_the_living_page_queues_a_remeasurement(measured, personas):
    _, release = measured
    url = reverse("releases:living_panel_add", args=[release.benchmark.slug])
    curator = personas.curator.client
    page = curator.post(url, {"endpoint": "999999"}, follow=True).content.decode()
    assert "Choose a model endpoint." in page
    strong = PanelSeat.objects.get(endpoint__name="strong").endpoint
    page = curator.post(url, {"endpoint": strong.pk}, follow=True).content.decode()
    assert "strong is already on the panel." in page
    before = Remeasurement.objects.count()
    newcomer = endpoint(FakeOpenAI(), "newcomer")
    page = curator.post(url, {"endpoint": newcomer.pk, "samples": "x"}, follow=True)
    assert "whole number" in page.content.decode()
    page = curator.post(url, {"endpoint": newcomer.pk, "samples": "2"}, follow=True)
    assert "newcomer joined the panel" in page.content.decode()
    latest = Remeasurement.objects.order_by("-id").first()
    assert Remeasurement.objects.count() == before + 1
    assert (latest.trigger, latest.state) == ("panel_change", "queued")
    assert {r.label for r in latest.runs.all()} == {"weak", "strong", "newcomer"}


def test_taking_a_model_off_the_panel_from_the_living_page_queues_a_remeasurement(
    measured, personas
):
    _, release = measured
    slug = release.benchmark.slug
    page = personas.curator.client.get(reverse("releases:living", args=[slug])).content.decode()
    remove = reverse("releases:living_panel_remove", args=[slug])
    form = re.search(rf'<form method="post" action="{remove}".*?</form>', page, re.S)[0]
    assert "Remove and re-measure" in form
    assert re.findall(r'<option value="\d+">(\w+)</option>', form) == ["weak", "strong"]
    assert remove not in public_get(reverse("releases:living", args=[slug]))
    url = reverse("releases:living_panel_remove", args=[slug])
    assert personas.reviewer_a.client.post(url).status_code == 403
    curator = personas.curator.client
    page = curator.post(url, {"endpoint": "999999"}, follow=True).content.decode()
    assert "Choose a model endpoint." in page
    strong = PanelSeat.objects.get(endpoint__name="strong").endpoint
    page = curator.post(url, {"endpoint": strong.pk}, follow=True).content.decode()
    assert "strong left the panel; the re-measurement is queued." in page
    latest = Remeasurement.objects.order_by("-id").first()
    assert (latest.trigger, latest.reason, latest.state) == (
        "panel_change",
        "strong left the panel",
        "queued",
    )
    assert {r.label for r in latest.runs.all()} == {"weak"}
    page = curator.post(url, {"endpoint": strong.pk}, follow=True).content.decode()
    assert "strong is not on the panel." in page
    weak = PanelSeat.objects.get(endpoint__name="weak").endpoint
    page = curator.post(url, {"endpoint": weak.pk}, follow=True).content.decode()
    assert "weak left the panel; no model is left to re-measure with." in page
    assert not PanelSeat.objects.exists()


def public_get(url: str) -> str:
    from django.test import Client

    response = Client().get(url)
    assert response.status_code == 200, url
    return response.content.decode()


def test_calibration_pages_are_for_curators(published, personas):
    world, release = published
    pages = [
        reverse("releases:release_calibration", args=[release.pk]),
        reverse("releases:living_calibration_campaign", args=[world.campaign.pk]),
    ]
    for url in pages:
        assert personas.anonymous.client.get(url).status_code == 302
        assert personas.reviewer_a.client.get(url).status_code == 403
        page = personas.curator.client.get(url)
        assert page.status_code == 200 and b"Human against model difficulty" in page.content
        assert b'data-figure="calibration-figure"' in page.content
    # The curator's release page links its calibration page.
    detail = personas.curator.client.get(reverse("releases:curate_detail", args=[release.pk]))
    assert f'href="{pages[0]}"' in detail.content.decode()
    route = reverse("releases:release_calibration_route", args=[release.pk])
    assert personas.reviewer_a.client.post(route).status_code == 403
    assert personas.curator.client.get(route).status_code == 405


def test_the_api_reports_the_living_benchmark_and_adds_models_with_named_errors(measured, personas):
    world, release = measured
    slug = release.benchmark.slug
    body = personas.anonymous.client.get(f"/api/benchmarks/{slug}/living").json()
    assert [s["model"] for s in body["panel"]] == ["weak", "strong"]
    assert [r["saturated"] for r in body["remeasurements"]] == [2, 0]  # newest first
    assert {f["public_id"] for f in body["saturated"]} == {
        world.problem("E-OK").public_id,
        world.problem("E-OVERRIDE").public_id,
    }
    assert body["saturated"][0]["saturating_models"] == ["strong"]

    url = f"/api/benchmarks/{slug}/panel"
    reviewer = personas.reviewer_a.client
    assert (
        reviewer.post(url, {"endpoint_id": 1}, content_type="application/json").status_code == 403
    )
    curator = personas.curator.client
    missing = curator.post(url, {"endpoint_id": 999999}, content_type="application/json")
    assert missing.status_code == 400 and "endpoint_id" in missing.json()["detail"]
    strong = PanelSeat.objects.get(endpoint__name="strong").endpoint
    twice = curator.post(url, {"endpoint_id": strong.pk}, content_type="application/json")
    assert twice.status_code == 400 and "endpoint_id: strong is already" in twice.json()["detail"]
    newcomer = endpoint(FakeOpenAI(), "newcomer")
    bad = curator.post(
        url, {"endpoint_id": newcomer.pk, "samples": 0}, content_type="application/json"
    )
    assert bad.status_code == 400 and bad.json()["detail"].startswith("samples:")
    ok = curator.post(url, {"endpoint_id": newcomer.pk}, content_type="application/json")
    assert ok.status_code == 201 and ok.json()["state"] == "queued"

    # Taking a model off the panel re-measures with the models that remain.
    leave = f"/api/benchmarks/{slug}/panel/{newcomer.pk}"
    assert reviewer.delete(leave).status_code == 403
    gone = curator.delete(leave)
    assert gone.status_code == 200, gone.content
    assert gone.json()["removed"] == "newcomer"
    assert gone.json()["remeasurement"]["reason"] == "newcomer left the panel"
    assert not PanelSeat.objects.filter(endpoint=newcomer).exists()
    again = curator.delete(leave)
    assert again.status_code == 404 and "newcomer is not on the panel" in again.json()["detail"]
    assert curator.delete(f"/api/benchmarks/{slug}/panel/999999").status_code == 404

    cal = curator.get(f"/api/releases/{release.pk}/calibration")
    assert cal.status_code == 200 and cal.json()["n"] == 2
    assert personas.anonymous.client.get(f"/api/releases/{release.pk}/calibration").status_code in (
        401,
        403,
    )
