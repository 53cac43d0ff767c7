"""Creating EvoSyn campaigns from the web form and the API: admins only, settings validated by
name, unknown references refused, optional launch, redirect to the campaign page."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from evolution.models import Campaign
from evolution.models.campaigns import CampaignKind, CampaignState
from evosyn.config import SETTING_HELP, EvoSynSettings
from evosyn.models import InstanceRole
from tests.factories import (
    ModelEndpointFactory,
    ProblemFactory,
    ProblemSetFactory,
    TestCaseFactory,
)

pytestmark = pytest.mark.django_db

API = "/api/evosyn/campaigns"


def function_seed(title: str):
    problem = ProblemFactory(
        title=title,
        harness="assert",
        entry_point="add",
        statement="Write `add(a, b)` returning the sum.",
        reference_solution="def add(a, b):\n    return a + b\n",
    )
    TestCaseFactory(problem=problem, input_text="", output_text="assert add(1, 2) == 3\n")
    return problem


@pytest.fixture
def refs():
    seeds = ProblemSetFactory(
        name="evosyn-form-seeds", problems=[function_seed("add one"), function_seed("add two")]
    )
    # A problem without human tests (here a stdio one) is not a usable EvoSyn seed: a set
    # holding only it must be refused.
    stdio_only = ProblemSetFactory(name="stdio-only", problems=[ProblemFactory()])
    return {
        "seeds": seeds,
        "stdio_only": stdio_only,
        "teacher": ModelEndpointFactory(name="teacher"),
        "writer": ModelEndpointFactory(name="writer"),
    }


def form_data(refs, **overrides) -> dict:
    data = {
        "name": "evosyn from the form",
        "seed_set": refs["seeds"].pk,
        "endpoint": refs["teacher"].pk,
        "seed_limit": "",
        "budget_max_calls": "",
        "budget_max_tokens": "",
        "budget_max_cost": "",
    }
    defaults = EvoSynSettings()
    for name in EvoSynSettings.names():
        data[f"setting_{name}"] = str(getattr(defaults, name))
    data.update(overrides)
    return data


def api_payload(refs, **overrides) -> dict:
    payload = {
        "name": "evosyn from the api",
        "seed_set": refs["seeds"].name,
        "endpoint_id": refs["teacher"].pk,
        "settings": {"max_iterations": 3, "solutions_per_problem": 4},
    }
    payload.update(overrides)
    return payload


def post_json(client, url: str, payload: dict):
    return client.post(url, json.dumps(payload), content_type="application/json")


# --------------------------------------------------------------------------- the form


def test_the_form_shows_every_setting_prefilled_with_its_default_and_help(personas, refs):
    page = personas.admin.client.get(reverse("evosyn:campaign_new"))
    assert page.status_code == 200
    form = page.context["form"]
    defaults = EvoSynSettings()
    for name in EvoSynSettings.names():
        field = form.fields[f"setting_{name}"]
        assert field.initial == getattr(defaults, name)
        assert field.help_text == SETTING_HELP[name]
    body = page.content.decode()
    assert 'name="setting_solutions_per_problem"' in body and 'value="16"' in body
    assert SETTING_HELP["duplicate_threshold"] in body


def test_an_admin_creates_a_draft_campaign_from_the_form_and_lands_on_its_page(personas, refs):
    data = form_data(
        refs,
        setting_max_iterations="7",
        setting_exploitation_ratio="0.5",
        test_writer_endpoint=refs["writer"].pk,
        seed_limit="1",
        budget_max_calls="500",
    )
    response = personas.admin.client.post(reverse("evosyn:campaign_new"), data)
    campaign = Campaign.objects.get(name="evosyn from the form")
    assert response.status_code == 302
    assert response["Location"] == reverse("evosyn:campaign_detail", args=[campaign.pk])
    assert campaign.kind == CampaignKind.EVOSYN
    assert campaign.state == CampaignState.DRAFT
    assert campaign.settings["max_iterations"] == 7
    assert campaign.settings["exploitation_ratio"] == 0.5
    assert campaign.settings["solutions_per_problem"] == 16
    assert campaign.evolver == refs["teacher"]
    assert campaign.role_endpoints == {"test_writer": refs["writer"].pk}
    assert campaign.budget_max_calls == 500
    assert campaign.created_by == personas.admin.user
    assert campaign.evosyn.instances.filter(role=InstanceRole.SEED).count() == 1
    page = personas.admin.client.get(response["Location"])
    assert page.status_code == 200 and b"evosyn from the form" in page.content


def test_the_launch_box_launches_the_campaign_and_schedules_its_first_tick(
    personas, refs, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = personas.admin.client.post(
            reverse("evosyn:campaign_new"), form_data(refs, launch="on")
        )
    assert response.status_code == 302
    campaign = Campaign.objects.get(name="evosyn from the form")
    assert campaign.state == CampaignState.QUEUED
    assert campaign.tick_token
    assert len(callbacks) == 1


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("solutions_per_problem", "1", "solutions_per_problem must be in [2, 64]"),
        ("max_iterations", "2.5", "max_iterations must be an integer"),
        ("exploitation_ratio", "lots", "exploitation_ratio must be a number"),
    ],
)
def test_the_form_rejects_a_bad_setting_on_the_field_it_names(
    personas, refs, setting, value, message
):
    response = personas.admin.client.post(
        reverse("evosyn:campaign_new"), form_data(refs, **{f"setting_{setting}": value})
    )
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert list(errors) == [f"setting_{setting}"]
    assert message in errors[f"setting_{setting}"][0]
    assert message in response.content.decode()
    assert not Campaign.objects.filter(kind=CampaignKind.EVOSYN).exists()


def test_the_form_refuses_unknown_references_and_unusable_seed_sets(personas, refs):
    client = personas.admin.client
    response = client.post(
        reverse("evosyn:campaign_new"), form_data(refs, seed_set=999999, endpoint=999999)
    )
    assert response.status_code == 200
    assert set(response.context["form"].errors) == {"seed_set", "endpoint"}

    response = client.post(
        reverse("evosyn:campaign_new"), form_data(refs, seed_set=refs["stdio_only"].pk)
    )
    errors = response.context["form"].errors
    assert "no function-level or stdin/stdout problem with human tests" in errors["seed_set"][0]
    assert not Campaign.objects.filter(kind=CampaignKind.EVOSYN).exists()


def test_only_admins_may_open_or_post_the_form(personas, refs):
    url = reverse("evosyn:campaign_new")
    for name in ("curator", "reviewer_a", "reviewer_b"):
        client = personas.all()[name].client
        assert client.get(url).status_code == 403
        assert client.post(url, form_data(refs)).status_code == 403
    anonymous = personas.anonymous.client.post(url, form_data(refs))
    assert anonymous.status_code == 302
    assert anonymous["Location"].startswith(reverse("login"))
    assert not Campaign.objects.filter(kind=CampaignKind.EVOSYN).exists()


def test_the_list_offers_new_campaigns_to_admins_only(personas, refs):
    url = reverse("evosyn:campaign_new")
    assert url.encode() in personas.admin.client.get(reverse("evosyn:campaign_list")).content
    curator_page = personas.curator.client.get(reverse("evosyn:campaign_list"))
    assert curator_page.status_code == 200 and url.encode() not in curator_page.content


def test_the_campaign_list_links_each_kinds_new_page_and_list(personas):
    body = personas.admin.client.get(reverse("evolution:campaign_list")).content.decode()
    for name in (
        "evosyn:campaign_new",
        "frontiersmith:campaign_new",
        "evosyn:campaign_list",
        "frontiersmith:campaign_list",
    ):
        assert f'href="{reverse(name)}"' in body
    curator_body = personas.curator.client.get(reverse("evolution:campaign_list")).content
    assert reverse("evosyn:campaign_new").encode() not in curator_body
    assert reverse("evosyn:campaign_list").encode() in curator_body


# --------------------------------------------------------------------------- controls


def test_an_admin_launches_pauses_and_resumes_from_the_campaign_page(personas, refs):
    personas.admin.client.post(reverse("evosyn:campaign_new"), form_data(refs))
    campaign = Campaign.objects.get(name="evosyn from the form")
    page = personas.admin.client.get(reverse("evosyn:campaign_detail", args=[campaign.pk]))
    launch_url = reverse("evosyn:campaign_control", args=[campaign.pk, "launch"])
    assert launch_url.encode() in page.content
    curator_page = personas.curator.client.get(
        reverse("evosyn:campaign_detail", args=[campaign.pk])
    )
    assert launch_url.encode() not in curator_page.content
    assert personas.curator.client.post(launch_url).status_code == 403

    for action, state in (("launch", "queued"), ("pause", "paused"), ("resume", "queued")):
        url = reverse("evosyn:campaign_control", args=[campaign.pk, action])
        response = personas.admin.client.post(url)
        assert response.status_code == 302
        campaign.refresh_from_db()
        assert campaign.state == state
    # Resuming a campaign that is not paused is refused with a message, not a crash.
    url = reverse("evosyn:campaign_control", args=[campaign.pk, "resume"])
    response = personas.admin.client.post(url, follow=True)
    assert response.status_code == 200
    campaign.refresh_from_db()
    assert campaign.state == "queued"
    # Earlier redirects were not followed, so their success messages are shown too.
    assert [m.level_tag for m in response.context["messages"]][-1] == "error"


# --------------------------------------------------------------------------- the API


def test_an_admin_creates_a_campaign_through_the_api(personas, refs):
    response = post_json(
        personas.admin.client,
        API,
        api_payload(refs, role_endpoints={"strategist": refs["writer"].pk}, budget_max_cost="2.5"),
    )
    assert response.status_code == 201, response.content
    body = response.json()
    campaign = Campaign.objects.get(pk=body["id"])
    assert body["kind"] == "evosyn" and body["state"] == "draft"
    assert body["seed_set"] == "evosyn-form-seeds" and body["seeds"] == 2
    assert body["endpoint"] == "teacher"
    assert body["role_endpoints"] == {"strategist": refs["writer"].pk}
    assert body["settings"]["max_iterations"] == 3
    assert body["settings"]["num_islands"] == 3
    assert body["url"] == reverse("evosyn:campaign_detail", args=[campaign.pk])
    assert str(campaign.budget_max_cost) == "2.5000"
    got = personas.curator.client.get(f"{API}/{campaign.pk}")
    assert got.status_code == 200 and got.json()["name"] == "evosyn from the api"


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
        api_payload(refs, settings={"num_islands": 0, "temperature_of_doom": 1}),
    )
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert set(errors) == {"num_islands", "temperature_of_doom"}
    assert "num_islands must be in [1, 16]" in errors["num_islands"][0]
    assert "unknown EvoSyn setting" in errors["temperature_of_doom"][0]
    assert not Campaign.objects.filter(kind=CampaignKind.EVOSYN).exists()


def test_the_api_refuses_unknown_references(personas, refs):
    response = post_json(
        personas.admin.client,
        API,
        api_payload(
            refs,
            seed_set="no-such-set",
            endpoint_id=999999,
            role_endpoints={"poet": refs["writer"].pk, "solver": 999998},
        ),
    )
    assert response.status_code == 400
    body = response.json()
    assert body["detail"] == "unknown references"
    assert "'no-such-set' does not exist" in body["errors"]["seed_set"][0]
    assert "endpoint 999999 does not exist" in body["errors"]["endpoint_id"][0]
    assert any("unknown role 'poet'" in m for m in body["errors"]["role_endpoints"])
    assert any("999998 does not exist" in m for m in body["errors"]["role_endpoints"])

    unusable = post_json(
        personas.admin.client, API, api_payload(refs, seed_set=refs["stdio_only"].name)
    )
    assert unusable.status_code == 400
    assert "seed_set" in unusable.json()["errors"]
    assert not Campaign.objects.filter(kind=CampaignKind.EVOSYN).exists()


def test_only_admins_may_create_through_the_api(personas, refs):
    for name in ("curator", "reviewer_a", "reviewer_b"):
        response = post_json(personas.all()[name].client, API, api_payload(refs))
        assert response.status_code == 403, name
    assert post_json(personas.anonymous.client, API, api_payload(refs)).status_code == 401
    assert not Campaign.objects.filter(kind=CampaignKind.EVOSYN).exists()
