"""Creating FrontierSmith campaigns from the web form and the API: admins only, settings
validated by name, unknown references refused, optional launch, redirect to the campaign page;
and the list of this kind's campaigns."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from evolution.models import Campaign
from evolution.models.campaigns import CampaignKind, CampaignState
from frontiersmith.config import SETTING_HELP, FrontierSettings
from tests.factories import (
    CampaignFactory,
    ModelEndpointFactory,
    ProblemFactory,
    ProblemSetFactory,
)

pytestmark = pytest.mark.django_db

API = "/api/frontiersmith/campaigns"


@pytest.fixture
def refs():
    return {
        "seeds": ProblemSetFactory(
            name="frontier-form-seeds", problems=[ProblemFactory(), ProblemFactory()]
        ),
        "empty": ProblemSetFactory(name="empty-set"),
        "closed": ProblemSetFactory(name="labelled-closed", problems=[ProblemFactory()]),
        "open": ProblemSetFactory(name="labelled-open", problems=[ProblemFactory()]),
        "mutator": ModelEndpointFactory(name="mutator"),
        "solver": ModelEndpointFactory(name="solver"),
    }


def form_data(refs, **overrides) -> dict:
    data = {
        "name": "frontier from the form",
        "seed_set": refs["seeds"].pk,
        "mutator_endpoint": refs["mutator"].pk,
        "solver_endpoint": refs["solver"].pk,
        "calibration_closed": "",
        "calibration_open": "",
        "seed_limit": "",
        "budget_max_calls": "",
        "budget_max_tokens": "",
        "budget_max_cost": "",
    }
    defaults = FrontierSettings()
    for name in FrontierSettings.names():
        data[f"setting_{name}"] = str(getattr(defaults, name))
    data.update(overrides)
    return data


def api_payload(refs, **overrides) -> dict:
    payload = {
        "name": "frontier from the api",
        "seed_set": refs["seeds"].name,
        "mutator_endpoint_id": refs["mutator"].pk,
        "solver_endpoint_id": refs["solver"].pk,
        "settings": {"rounds": 2, "budget_candidates": 8, "n_div": 4, "n_final": 2},
    }
    payload.update(overrides)
    return payload


def post_json(client, url: str, payload: dict):
    return client.post(url, json.dumps(payload), content_type="application/json")


# --------------------------------------------------------------------------- the form


def test_the_form_shows_every_setting_prefilled_with_its_default_and_help(personas, refs):
    page = personas.admin.client.get(reverse("frontiersmith:campaign_new"))
    assert page.status_code == 200
    form = page.context["form"]
    defaults = FrontierSettings()
    for name in FrontierSettings.names():
        field = form.fields[f"setting_{name}"]
        assert field.initial == getattr(defaults, name)
        assert field.help_text == SETTING_HELP[name]
    body = page.content.decode()
    assert 'name="setting_budget_candidates"' in body and 'value="1000"' in body
    assert SETTING_HELP["n_final"] in body


def test_an_admin_creates_a_draft_campaign_from_the_form_and_lands_on_its_page(personas, refs):
    data = form_data(
        refs,
        setting_rounds="2",
        setting_min_objective_spread="0.1",
        calibration_closed=refs["closed"].pk,
        calibration_open=refs["open"].pk,
        seed_limit="1",
        budget_max_tokens="100000",
    )
    response = personas.admin.client.post(reverse("frontiersmith:campaign_new"), data)
    campaign = Campaign.objects.get(name="frontier from the form")
    assert response.status_code == 302
    assert response["Location"] == reverse("frontiersmith:campaign_detail", args=[campaign.pk])
    assert campaign.kind == CampaignKind.FRONTIERSMITH
    assert campaign.state == CampaignState.DRAFT
    assert campaign.settings["rounds"] == 2
    assert campaign.settings["min_objective_spread"] == 0.1
    assert campaign.settings["n_div"] == 100
    assert campaign.budget_max_tokens == 100000
    assert campaign.created_by == personas.admin.user
    fc = campaign.frontier
    assert fc.mutator_endpoint == refs["mutator"] and fc.solver_endpoint == refs["solver"]
    assert fc.calibration_closed == refs["closed"] and fc.calibration_open == refs["open"]
    assert fc.seed_pool.problems.count() == 1
    page = personas.admin.client.get(response["Location"])
    assert page.status_code == 200 and b"frontier from the form" in page.content


def test_the_launch_box_launches_the_campaign_and_schedules_its_first_tick(
    personas, refs, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = personas.admin.client.post(
            reverse("frontiersmith:campaign_new"), form_data(refs, launch="on")
        )
    assert response.status_code == 302
    campaign = Campaign.objects.get(name="frontier from the form")
    assert campaign.state == CampaignState.QUEUED
    assert len(callbacks) == 1


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"setting_solutions_per_candidate": "1"}, "setting_solutions_per_candidate", "[2, 50]"),
        ({"setting_rounds": "two"}, "setting_rounds", "rounds must be an integer"),
        (
            {"setting_n_div": "10", "setting_n_final": "20"},
            "setting_n_final",
            "n_final must not exceed n_div",
        ),
    ],
)
def test_the_form_rejects_a_bad_setting_on_the_field_it_names(
    personas, refs, overrides, field, message
):
    response = personas.admin.client.post(
        reverse("frontiersmith:campaign_new"), form_data(refs, **overrides)
    )
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert list(errors) == [field]
    assert message in errors[field][0]
    assert not Campaign.objects.filter(kind=CampaignKind.FRONTIERSMITH).exists()


def test_the_form_refuses_unknown_references_and_empty_seed_sets(personas, refs):
    client = personas.admin.client
    response = client.post(
        reverse("frontiersmith:campaign_new"),
        form_data(refs, seed_set=999999, solver_endpoint=999999, calibration_open=999999),
    )
    assert response.status_code == 200
    assert set(response.context["form"].errors) == {
        "seed_set",
        "solver_endpoint",
        "calibration_open",
    }
    response = client.post(
        reverse("frontiersmith:campaign_new"), form_data(refs, seed_set=refs["empty"].pk)
    )
    assert "has no problems" in response.context["form"].errors["seed_set"][0]
    assert not Campaign.objects.filter(kind=CampaignKind.FRONTIERSMITH).exists()


def test_only_admins_may_open_or_post_the_form(personas, refs):
    url = reverse("frontiersmith:campaign_new")
    for name in ("curator", "reviewer_a", "reviewer_b"):
        client = personas.all()[name].client
        assert client.get(url).status_code == 403
        assert client.post(url, form_data(refs)).status_code == 403
    anonymous = personas.anonymous.client.post(url, form_data(refs))
    assert anonymous.status_code == 302
    assert anonymous["Location"].startswith(reverse("login"))
    assert not Campaign.objects.filter(kind=CampaignKind.FRONTIERSMITH).exists()


# --------------------------------------------------------------------------- list and controls


def test_the_list_shows_this_kind_only_and_offers_creation_to_admins(personas, refs):
    post_json(personas.admin.client, API, api_payload(refs))
    other = CampaignFactory(name="a benchevolver campaign")
    url = reverse("frontiersmith:campaign_list")
    admin_page = personas.admin.client.get(url)
    assert admin_page.status_code == 200
    body = admin_page.content.decode()
    assert "frontier from the api" in body and other.name not in body
    assert reverse("frontiersmith:campaign_new") in body
    curator_page = personas.curator.client.get(url)
    assert curator_page.status_code == 200
    assert reverse("frontiersmith:campaign_new").encode() not in curator_page.content
    assert personas.reviewer_a.client.get(url).status_code == 403
    assert personas.anonymous.client.get(url).status_code == 302


def test_launch_controls_are_shown_to_admins_only(personas, refs):
    campaign_id = post_json(personas.admin.client, API, api_payload(refs)).json()["id"]
    launch_url = reverse("frontiersmith:campaign_control", args=[campaign_id, "launch"])
    detail = reverse("frontiersmith:campaign_detail", args=[campaign_id])
    assert launch_url.encode() in personas.admin.client.get(detail).content
    assert launch_url.encode() not in personas.curator.client.get(detail).content
    assert personas.curator.client.post(launch_url).status_code == 403
    assert personas.admin.client.post(launch_url).status_code == 302
    assert Campaign.objects.get(pk=campaign_id).state == CampaignState.QUEUED


# --------------------------------------------------------------------------- the API


def test_an_admin_creates_a_campaign_through_the_api(personas, refs):
    response = post_json(
        personas.admin.client,
        API,
        api_payload(
            refs,
            calibration_closed="labelled-closed",
            calibration_open="labelled-open",
            budget_max_calls=300,
        ),
    )
    assert response.status_code == 201, response.content
    body = response.json()
    campaign = Campaign.objects.get(pk=body["id"])
    assert body["kind"] == "frontiersmith" and body["state"] == "draft"
    assert body["seed_set"] == "frontier-form-seeds" and body["seed_pool_size"] == 2
    assert body["mutator_endpoint"] == "mutator" and body["solver_endpoint"] == "solver"
    assert body["calibration_closed"] == "labelled-closed"
    assert body["calibration_open"] == "labelled-open"
    assert body["settings"]["n_final"] == 2 and body["settings"]["tests_per_candidate"] == 8
    assert body["url"] == reverse("frontiersmith:campaign_detail", args=[campaign.pk])
    assert campaign.budget_max_calls == 300
    got = personas.curator.client.get(f"{API}/{campaign.pk}")
    assert got.status_code == 200 and got.json()["name"] == "frontier from the api"


def test_the_api_launches_on_request(personas, refs, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = post_json(personas.admin.client, API, api_payload(refs, launch=True))
    assert response.status_code == 201
    assert response.json()["state"] == "queued"
    assert len(callbacks) == 1


def test_the_api_rejects_bad_settings_by_name(personas, refs):
    response = post_json(
        personas.admin.client,
        API,
        api_payload(refs, settings={"judge_temperature": 3, "n_div": 50, "budget_candidates": 10}),
    )
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert set(errors) == {"judge_temperature", "n_div"}
    assert "judge_temperature must be in [0.0, 2.0]" in errors["judge_temperature"][0]
    assert "n_div must not exceed budget_candidates" in errors["n_div"][0]
    assert not Campaign.objects.filter(kind=CampaignKind.FRONTIERSMITH).exists()


def test_the_api_refuses_unknown_references(personas, refs):
    response = post_json(
        personas.admin.client,
        API,
        api_payload(
            refs, seed_set="nope", mutator_endpoint_id=999999, calibration_closed="missing"
        ),
    )
    assert response.status_code == 400
    body = response.json()
    assert body["detail"] == "unknown references"
    assert set(body["errors"]) == {"seed_set", "mutator_endpoint_id", "calibration_closed"}
    assert "'nope' does not exist" in body["errors"]["seed_set"][0]
    empty = post_json(personas.admin.client, API, api_payload(refs, seed_set="empty-set"))
    assert empty.status_code == 400 and "seed_set" in empty.json()["errors"]
    assert not Campaign.objects.filter(kind=CampaignKind.FRONTIERSMITH).exists()


def test_only_admins_may_create_through_the_api(personas, refs):
    for name in ("curator", "reviewer_a", "reviewer_b"):
        response = post_json(personas.all()[name].client, API, api_payload(refs))
        assert response.status_code == 403, name
    assert post_json(personas.anonymous.client, API, api_payload(refs)).status_code == 401
    assert personas.reviewer_a.client.get(f"{API}/1").status_code == 403
    assert not Campaign.objects.filter(kind=CampaignKind.FRONTIERSMITH).exists()


def test_the_campaign_page_polls_its_live_section_while_active(personas, refs):
    campaign_id = post_json(personas.admin.client, API, api_payload(refs)).json()["id"]
    url = reverse("frontiersmith:campaign_detail", args=[campaign_id])
    client = personas.curator.client
    assert "hx-get" not in client.get(url).content.decode()  # a draft: nothing moves
    Campaign.objects.filter(pk=campaign_id).update(state=CampaignState.QUEUED)
    assert f'hx-get="{url}"' in client.get(url).content.decode()
    poll = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert poll.lstrip().startswith('<section id="live"') and "<h1>" not in poll
    assert '<b id="state">queued</b>' in poll
