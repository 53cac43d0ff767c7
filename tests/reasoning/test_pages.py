"""Pages, downloads and API of reasoning campaigns: who may see what, and what they show."""

from __future__ import annotations

import json

import pytest

from evolution.streams.runner import run_inline
from reasoning.models import ReasoningItem

from .helpers import World, endpoint, make_campaign, one_type

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished(fake_server):
    world = World()
    world.verdicts = [True, False, None, True]
    fake_server.responder = world
    campaign = make_campaign(fake_server, reasoning_types=one_type(), difficulty_end=2, runs=2)
    return run_inline(campaign_id=campaign.pk)


def test_reviewers_and_visitors_cannot_open_reasoning_pages(personas, finished):
    urls = [
        "/reasoning/",
        f"/reasoning/{finished.pk}/",
        f"/reasoning/{finished.pk}/charts.json",
        f"/reasoning/{finished.pk}/items/",
        f"/reasoning/{finished.pk}/log.jsonl",
        f"/reasoning/{finished.pk}/runs/1/report.md",
    ]
    for url in urls:
        assert personas.reviewer_a.client.get(url).status_code == 403, url
        assert personas.anonymous.client.get(url).status_code == 302, url
        assert personas.curator.client.get(url).status_code == 200, url


def test_the_campaign_page_shows_state_runs_and_reports(personas, finished):
    page = personas.curator.client.get(f"/reasoning/{finished.pk}/").content.decode()
    assert "Type × difficulty matrix" in page
    assert "report_run_2.md" in page
    assert "plotly" in page and "cdn" not in page.lower()
    partial = personas.curator.client.get(f"/reasoning/{finished.pk}/", HTTP_HX_REQUEST="true")
    assert b'id="live"' in partial.content and b"<html" not in partial.content


def test_the_chart_data_holds_the_matrix_and_the_ema_series(personas, finished):
    data = personas.curator.client.get(f"/reasoning/{finished.pk}/charts.json").json()
    matrix = data["matrix"]
    assert matrix["types"] == ["logical_deduction"]
    assert matrix["difficulties"] == [1, 2]
    # Run 1: correct, incorrect; run 2: parse failure (0.0), correct.
    assert matrix["z"] == [[0.5, 0.5]]
    assert matrix["counts"] == [[2, 2]]
    assert data["ema"]["runs"] == [1, 2]
    assert data["ema"]["overall"] == [pytest.approx(0.5), pytest.approx(0.5)]
    one = personas.curator.client.get(f"/reasoning/{finished.pk}/charts.json?run=2").json()
    assert one["matrix"]["z"] == [[0.0, 1.0]]


def test_the_report_and_the_result_log_download(personas, finished):
    report = personas.curator.client.get(f"/reasoning/{finished.pk}/runs/2/report.md")
    assert report["Content-Disposition"].endswith(f'report_campaign_{finished.pk}_run_2.md"')
    text = report.content.decode()
    assert "## Performance by reasoning type" in text and "1 judge parse failure(s)" in text
    log = personas.curator.client.get(f"/reasoning/{finished.pk}/log.jsonl").content.decode()
    events = [json.loads(line)["event"] for line in log.splitlines()]
    assert events.count("item_scored") == 4 and events.count("run_finished") == 2


def test_the_item_list_filters_parse_failures(personas, finished):
    page = personas.curator.client.get(
        f"/reasoning/{finished.pk}/items/?flagged=parse_failure"
    ).content.decode()
    assert "1 item." in page and "parse failure" in page


def test_a_curator_overrides_a_score_on_the_item_page(personas, finished):
    item = ReasoningItem.objects.get(reasoning_id=finished.pk, run__number=2, difficulty=1)
    url = f"/reasoning/items/{item.pk}/"
    refused = personas.curator.client.post(url, {"score": "1", "reason": ""})
    assert refused.status_code == 200 and b"This field is required" in refused.content
    done = personas.curator.client.post(url, {"score": "1", "reason": "the answer is right"})
    assert done.status_code == 302
    item.refresh_from_db()
    assert item.score == 1.0 and item.override_by == personas.curator.user
    assert item.reasoning.ema == pytest.approx(0.3 * 1.0 + 0.7 * 0.5)
    assert personas.reviewer_a.client.post(url, {"score": "0", "reason": "x"}).status_code == 403


def test_an_admin_creates_a_campaign_through_the_api_and_bad_settings_are_named(
    personas, fake_server
):
    gen, ans, judge = (endpoint(fake_server, n) for n in ("api-gen", "api-ans", "api-judge"))
    body = {
        "name": "api campaign",
        "generation_endpoint_id": gen.pk,
        "answering_endpoint_id": ans.pk,
        "judge_endpoint_ids": [judge.pk],
        "settings": {"num_questions": 2, "runs": 2},
    }
    created = personas.admin.client.post(
        "/api/reasoning/campaigns", json.dumps(body), content_type="application/json"
    )
    assert created.status_code == 201, created.content
    assert created.json()["settings"]["num_questions"] == 2
    assert created.json()["run_state"]["current_difficulty"] == 1
    bad = personas.admin.client.post(
        "/api/reasoning/campaigns",
        json.dumps({**body, "settings": {"alpha": 0}}),
        content_type="application/json",
    )
    assert bad.status_code == 422 and "alpha" in bad.json()["detail"]
    curator = personas.curator.client.post(
        "/api/reasoning/campaigns", json.dumps(body), content_type="application/json"
    )
    assert curator.status_code == 403


def test_the_api_lists_items_and_overrides_a_score(personas, finished):
    items = personas.curator.client.get(f"/api/reasoning/campaigns/{finished.pk}/items?run=1")
    assert [i["score"] for i in items.json()] == [1.0, 0.0]
    wrong = items.json()[1]
    done = personas.curator.client.post(
        f"/api/reasoning/items/{wrong['id']}/override",
        json.dumps({"score": 1.0, "reason": "correct after all"}),
        content_type="application/json",
    )
    assert done.status_code == 200 and done.json()["overridden"] is True
    state = personas.curator.client.get(f"/api/reasoning/campaigns/{finished.pk}").json()
    assert state["run_state"]["ema"] == pytest.approx(0.3 * 0.5 + 0.7 * 1.0)


def test_an_admin_creates_a_campaign_through_the_form(personas, fake_server):
    gen, ans = endpoint(fake_server, "form-gen"), endpoint(fake_server, "form-ans")
    judges = [endpoint(fake_server, "form-j1"), endpoint(fake_server, "form-j2")]
    response = personas.admin.client.post(
        "/reasoning/new/",
        {
            "name": "form campaign",
            "generation_endpoint": gen.pk,
            "answering_endpoint": ans.pk,
            "judge_endpoints": [j.pk for j in judges],
            "reasoning_types": "logical_deduction: logic\nlegal_reasoning: statutes and cases",
            "setting_alpha": "0.5",
            "setting_judge_aggregation": "mean",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    from evolution.models import Campaign

    campaign = Campaign.objects.get(name="form campaign")
    assert campaign.kind == "reasoning"
    assert campaign.settings["alpha"] == 0.5
    assert [t["name"] for t in campaign.settings["reasoning_types"]] == [
        "logical_deduction",
        "legal_reasoning",
    ]
    assert campaign.reasoning.seats.count() == 2
