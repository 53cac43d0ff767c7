"""Every campaign-create API bounds a campaign's own numbers (issue #34, finding 5): a negative
budget or seed limit, or one past what its column holds, is a 4xx naming the field and
creates nothing; it was a 500 (the database's check constraint) on all five. The service
checks again for any other caller."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from accounts.models import APIToken
from evolution.models import Campaign
from evolution.services.campaigns import campaign_record_create
from tests.factories import (
    ModelEndpointFactory,
    PanelFactory,
    PanelMemberFactory,
    ProblemSetFactory,
    TestCaseFactory,
)

pytestmark = pytest.mark.django_db

INT_PAST = 2**31  # one past an integer column
BIGINT_PAST = 2**63  # one past a bigint column

COMMON = [
    ("budget_max_calls", -1),
    ("budget_max_calls", 0),
    ("budget_max_calls", INT_PAST),
    ("budget_max_tokens", -5),
    ("budget_max_tokens", BIGINT_PAST),
    ("budget_max_cost", -0.5),
    ("budget_max_cost", 10**9),
    ("name", ""),
]
SEED_LIMIT = [("seed_limit", -3), ("seed_limit", 0), ("seed_limit", INT_PAST)]
CREATE_PATHS = [
    "/api/campaigns",
    "/api/xcoder/campaigns",
    "/api/evosyn/campaigns",
    "/api/frontiersmith/campaigns",
    "/api/reasoning/campaigns",
]


@pytest.fixture
def world():
    endpoint = ModelEndpointFactory()
    panel = PanelFactory()
    PanelMemberFactory(panel=panel, endpoint=endpoint)
    problems = [TestCaseFactory().problem, TestCaseFactory().problem]  # stdin/stdout, tested
    seeds = ProblemSetFactory(name="bounded-seeds", problems=problems)
    return endpoint, panel, seeds


def _payloads(world) -> dict[str, tuple[dict, list]]:
    endpoint, panel, seeds = world
    common = {"name": "bounded", "seed_set": seeds.name}
    return {
        "/api/campaigns": (
            {**common, "evolver_id": endpoint.pk, "panel_id": panel.pk},
            COMMON + SEED_LIMIT,
        ),
        "/api/xcoder/campaigns": (
            {**common, "generator_endpoint_id": endpoint.pk, "solver_endpoint_ids": [endpoint.pk]},
            COMMON + SEED_LIMIT,
        ),
        "/api/evosyn/campaigns": (
            {**common, "endpoint_id": endpoint.pk, "panel_id": panel.pk},
            COMMON + SEED_LIMIT,
        ),
        "/api/frontiersmith/campaigns": (
            {
                **common,
                "mutator_endpoint_id": endpoint.pk,
                "solver_endpoint_id": endpoint.pk,
                "calibration_open": seeds.name,
            },
            COMMON + SEED_LIMIT,
        ),
        # A reasoning campaign has no seed set: its bounded fields are its name and budget.
        "/api/reasoning/campaigns": (
            {
                "name": "bounded",
                "generation_endpoint_id": endpoint.pk,
                "answering_endpoint_id": endpoint.pk,
                "judge_endpoint_ids": [endpoint.pk],
            },
            COMMON,
        ),
    }


@pytest.mark.parametrize("path", CREATE_PATHS)
def test_a_bound_past_its_limit_is_a_4xx_naming_the_field(personas, client, world, path):
    headers = {
        "HTTP_AUTHORIZATION": f"Bearer {APIToken.issue(user=personas.admin.user, name='b')[1]}"
    }
    valid, cases = _payloads(world)[path]
    wrong = []
    for field, value in cases:
        response = client.post(
            path, {**valid, field: value}, content_type="application/json", **headers
        )
        body = response.content.decode()
        if not (400 <= response.status_code < 500 and field in body):
            wrong.append((field, value, response.status_code, body[:200]))
    assert wrong == []
    assert not Campaign.objects.exists()
    # The same payload within bounds is created: the references above are right.
    made = client.post(
        path,
        {**valid, "budget_max_calls": 10, "budget_max_cost": "2.5"},
        content_type="application/json",
        **headers,
    )
    assert made.status_code == 201, made.content
    assert Campaign.objects.get().budget_max_cost == Decimal("2.5")


def test_the_create_service_refuses_them_for_every_other_caller():
    from evolution.benchevolver.engine.config import EvolutionSettings

    with pytest.raises(ValidationError) as refused:
        campaign_record_create(
            kind="benchevolver",
            name="direct",
            validated=EvolutionSettings(),
            endpoints=[],
            budget_max_calls=-1,
            budget_max_cost=Decimal("-1"),
            seed_limit=0,
        )
    assert set(refused.value.message_dict) == {"budget_max_calls", "budget_max_cost", "seed_limit"}
    assert not Campaign.objects.exists()


@pytest.mark.parametrize("path", CREATE_PATHS)
def test_a_create_whose_launch_fails_leaves_no_draft_behind(
    personas, client, world, path, monkeypatch
):
    """Every kind's create operation creates and launches in one transaction. BenchEvolver's
    own create launched after creating, so a refused launch left a draft nobody asked for; the
    reasoning create ignored ``launch`` altogether."""
    from evolution.services import campaigns as campaign_services

    def refuse(*, campaign_id):
        raise ValidationError({"launch": ["no worker serves this campaign's queues"]})

    monkeypatch.setattr(campaign_services, "campaign_launch", refuse)
    headers = {
        "HTTP_AUTHORIZATION": f"Bearer {APIToken.issue(user=personas.admin.user, name='l')[1]}"
    }
    valid, _ = _payloads(world)[path]
    response = client.post(
        path, {**valid, "launch": True}, content_type="application/json", **headers
    )
    # 400 (422 for the reasoning API, whose refusals are all 422) naming why.
    assert response.status_code in (400, 422), response.content
    assert "no worker serves" in response.content.decode()
    assert not Campaign.objects.exists()
