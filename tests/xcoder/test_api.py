"""X-Coder campaigns over the HTTP API, like the other kinds': admins create (and optionally
launch), admins and curators read a campaign with its task counts, accepted problems and their
panel measurement, and list its tasks; bad settings and unknown references are refused by
name with nothing created."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from evolution.models import Campaign
from evolution.models.campaigns import CampaignKind
from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline
from tests.evolution.measurement.helpers import PanelAnswers, make_panel
from tests.factories import PanelFactory

from .helpers import (
    CORRECT,
    SCRIPTED_SETTINGS,
    WRONG_LARGE,
    Responder,
    base_table,
    endpoint,
    seed_set,
)

API = "/api/xcoder/campaigns"


def post_json(client, url: str, payload: dict):
    return client.post(url, data=json.dumps(payload), content_type="application/json")


def payload(server, **overrides) -> dict:
    data = {
        "name": "xcoder from the api",
        "seed_set": seed_set().name,
        "generator_endpoint_id": endpoint(server, "generator").pk,
        "solver_endpoint_ids": [endpoint(server, "solver-a").pk, endpoint(server, "solver-b").pk],
        "settings": {"num_tasks": 1, "style_mix": {"codeforces": 100}, **SCRIPTED_SETTINGS},
    }
    data.update(overrides)
    return data


@pytest.mark.django_db
def test_an_admin_creates_a_campaign_and_curators_read_it(personas, fake_server):
    panel = PanelFactory(name="api panel")
    response = post_json(
        personas.admin.client,
        API,
        payload(fake_server, panel_id=panel.pk, budget_max_calls=500, seed_limit=1),
    )
    assert response.status_code == 201, response.content
    body = response.json()
    campaign = Campaign.objects.get(pk=body["id"])
    assert (body["kind"], body["state"]) == ("xcoder", "draft")
    assert body["generator_endpoint"] == "generator"
    assert body["solver_endpoints"] == ["solver-a", "solver-b"]
    assert body["settings"]["num_tasks"] == 1 and body["settings"]["measure_kept"] is True
    assert body["measurement"] == {
        "panel": "api panel",
        "skip_reason": "",
        "kept": 0,
        "measured": 0,
        "failed": 0,
    }
    assert body["url"] == reverse("xcoder:campaign_detail", args=[campaign.pk])
    assert campaign.budget_max_calls == 500 and campaign.seed_limit == 1
    assert campaign.panel == panel and campaign.created_by == personas.admin.user
    got = personas.curator.client.get(f"{API}/{campaign.pk}")
    assert got.status_code == 200 and got.json()["name"] == "xcoder from the api"
    assert personas.curator.client.get(f"{API}/{campaign.pk}/tasks").json() == []


@pytest.mark.django_db
def test_the_api_launches_on_request(personas, fake_server, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = post_json(personas.admin.client, API, payload(fake_server, launch=True))
    assert response.status_code == 201
    assert response.json()["state"] == "queued"
    assert len(callbacks) == 1


@pytest.mark.django_db
def test_the_api_refuses_bad_settings_and_unknown_references_by_name(personas, fake_server):
    bad = post_json(
        personas.admin.client,
        API,
        payload(fake_server, settings={"num_tasks": 0, "test_mode": "guess", "measure_k": 99}),
    )
    assert bad.status_code == 400
    assert set(bad.json()["errors"]) == {"num_tasks", "test_mode", "measure_k"}
    unknown = post_json(
        personas.admin.client,
        API,
        payload(
            fake_server,
            seed_set="nope",
            generator_endpoint_id=999999,
            solver_endpoint_ids=[999998],
            panel_id=999997,
        ),
    )
    assert unknown.status_code == 400
    assert unknown.json()["detail"] == "unknown references"
    assert set(unknown.json()["errors"]) == {
        "seed_set",
        "generator_endpoint_id",
        "solver_endpoint_ids",
        "panel_id",
    }
    assert not Campaign.objects.filter(kind=CampaignKind.XCODER).exists()


@pytest.mark.django_db
def test_only_admins_create_and_reviewers_read_nothing(personas, fake_server):
    for name in ("curator", "reviewer_a"):
        response = post_json(personas.all()[name].client, API, payload(fake_server))
        assert response.status_code == 403, name
    assert post_json(personas.anonymous.client, API, payload(fake_server)).status_code == 401
    assert personas.reviewer_a.client.get(f"{API}/1").status_code == 403
    assert personas.admin.client.get(f"{API}/999999").status_code == 404
    assert not Campaign.objects.filter(kind=CampaignKind.XCODER).exists()


@pytest.mark.django_db(transaction=True)
def test_a_finished_campaign_reports_its_tasks_and_measured_problems(personas, fake_server):
    fake_server.responder = PanelAnswers(
        {"Lantern Festival": {"strong": CORRECT, "weak": WRONG_LARGE}},
        fallback=Responder(base_table()),
    )
    panel = make_panel(fake_server, ["strong", "weak"])
    response = post_json(personas.admin.client, API, payload(fake_server, panel_id=panel.pk))
    campaign_id = response.json()["id"]
    campaign_services.campaign_launch(campaign_id=campaign_id)
    run_inline(campaign_id=campaign_id, max_steps=80)

    body = personas.curator.client.get(f"{API}/{campaign_id}").json()
    assert body["state"] == "completed"
    assert body["task_counts"]["accepted"] == 1
    [public_id] = body["accepted_problems"]
    assert body["measurement"]["kept"] == body["measurement"]["measured"] == 1
    [task] = personas.curator.client.get(f"{API}/{campaign_id}/tasks").json()
    assert (task["index"], task["status"], task["problem"]) == (0, "accepted", public_id)
    assert task["url"] == reverse("xcoder:task_detail", args=[campaign_id, 0])
