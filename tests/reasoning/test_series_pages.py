"""The series on the reasoning pages and in the API: the campaign page shows the series it
continues (the EMA each campaign started from and left), the series page every run across its
campaigns; the API creates a campaign in a series and reads the series."""

from __future__ import annotations

import json

import pytest

from evolution.streams.runner import run_inline
from reasoning.models import ReasoningSeries

from .helpers import World, endpoint, make_campaign, one_type

pytestmark = pytest.mark.django_db


@pytest.fixture
def two(fake_server):
    """Two campaigns of the series "Pages series", one run each over difficulties 1-2: the
    first scores 1.0, the second 0.5."""
    world = World()
    fake_server.responder = world
    made = []
    for verdicts in ([True, True], [True, False]):
        world.verdicts = list(verdicts)
        campaign = make_campaign(
            fake_server, series="Pages series", reasoning_types=one_type(), difficulty_end=2
        )
        made.append(run_inline(campaign_id=campaign.pk))
    return made


def test_the_campaign_page_shows_the_series_and_each_campaigns_ema(personas, two):
    first, second = two
    page = personas.curator.client.get(f"/reasoning/{second.pk}/").content.decode()
    section = page[page.index('id="series"') :]
    assert "/reasoning/series/pages-series/" in section
    table = section[section.index('id="series-campaigns"') : section.index("</table>")]
    assert table.index(first.name) < table.index(second.name)
    rows = table.split("<tr")[2:]
    # First: from nothing to 1.000; second: from 1.000 to 0.3 x 0.5 + 0.7 x 1.0 = 0.850.
    assert "(first)" in rows[0] and "1.000" in rows[0]
    assert rows[1].count("1.000") == 1 and "0.850" in rows[1] and "(this campaign)" in rows[1]
    assert 'id="series-ema">0.850<' in section and 'id="series-run-count">2<' in section


def test_the_series_page_lists_every_run_across_its_campaigns(personas, two):
    first, second = two
    assert personas.reviewer_a.client.get("/reasoning/series/pages-series/").status_code == 403
    assert personas.anonymous.client.get("/reasoning/series/pages-series/").status_code == 302
    page = personas.curator.client.get("/reasoning/series/pages-series/").content.decode()
    runs = page[page.index('id="series-runs"') :]
    assert runs.index(first.name) < runs.index(second.name)
    assert f"/reasoning/{second.pk}/runs/2/report.md" in runs
    data = json.loads(page[page.index('id="series-ema-data"') :].split(">", 1)[1].split("<")[0])
    assert data["runs"] == [1, 2] and data["campaigns"] == [first.name, second.name]
    assert data["overall"] == [pytest.approx(1.0), pytest.approx(0.85)]
    listing = personas.curator.client.get("/reasoning/series/").content.decode()
    assert "Pages series" in listing
    assert personas.curator.client.get("/reasoning/series/nothing-here/").status_code == 404


def test_the_api_creates_a_campaign_in_a_series_and_reads_the_series(personas, fake_server, two):
    gen, ans, judge = (endpoint(fake_server, n) for n in ("s-gen", "s-ans", "s-judge"))
    body = {
        "name": "third of the series",
        "generation_endpoint_id": gen.pk,
        "answering_endpoint_id": ans.pk,
        "judge_endpoint_ids": [judge.pk],
        "series": "pages-series",  # by slug
    }
    created = personas.admin.client.post(
        "/api/reasoning/campaigns", json.dumps(body), content_type="application/json"
    )
    assert created.status_code == 201, created.content
    series = created.json()["series"]
    assert series["name"] == "Pages series" and series["run_count"] == 2
    assert series["ema"] == pytest.approx(0.85)
    assert [c["name"] for c in series["campaigns"]][-1] == "third of the series"
    # Before its first run it shows the series' state it will start from.
    assert created.json()["run_state"]["ema"] == pytest.approx(0.85)
    read = personas.curator.client.get("/api/reasoning/series/pages-series").json()
    assert [c["runs"] for c in read["campaigns"]] == [[1], [2], []]
    assert [c["ema_start"] for c in read["campaigns"][:2]] == [None, pytest.approx(1.0)]
    assert read["holder"] is None
    assert personas.reviewer_a.client.get("/api/reasoning/series/pages-series").status_code == 403
    assert personas.curator.client.get("/api/reasoning/series/nope").status_code == 404
    # A new name starts a new series; no name, a series of the campaign's own.
    fresh = personas.admin.client.post(
        "/api/reasoning/campaigns",
        json.dumps({**body, "name": "alone", "series": ""}),
        content_type="application/json",
    ).json()
    assert fresh["series"]["name"] == "alone" and fresh["series"]["run_count"] == 0
    assert ReasoningSeries.objects.count() == 2


def test_the_creation_form_takes_a_series(personas, fake_server, two):
    gen, ans, judge = (endpoint(fake_server, n) for n in ("f-gen", "f-ans", "f-judge"))
    response = personas.admin.client.post(
        "/reasoning/new/",
        {
            "name": "form continuation",
            "series": "Pages series",
            "generation_endpoint": gen.pk,
            "answering_endpoint": ans.pk,
            "judge_endpoints": [judge.pk],
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    series = ReasoningSeries.objects.get(name="Pages series")
    assert series.campaigns.filter(campaign__name="form continuation").exists()
    form = personas.admin.client.get("/reasoning/new/").content.decode()
    assert 'name="series"' in form
