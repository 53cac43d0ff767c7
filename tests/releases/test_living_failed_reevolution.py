"""A re-evolution whose evolver refuses every call is a failure, not a completion: the campaign
ends ``failed`` with the reason, and the saturated problems it took can be re-evolved again
(issue: it read "completed: every lineage finished" with 0 accepted and used them up)."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from evolution.models import ModelEndpoint
from evolution.streams.runner import run_inline
from releases import living
from releases.models import ReEvolution
from tests.support.fake_openai import FakeOpenAI, Fault

from .living_support import REEVOLUTION_SETTINGS, Evolution, remeasured_release

pytestmark = pytest.mark.django_db(transaction=True)


class RefusingEvolver(Evolution):
    """The panel answers as in the living world; every evolver role gets HTTP 400 (a model
    name the provider does not serve, say), which stays the request's: no retry, no pause."""

    def __call__(self, body, headers):
        role = headers.get("X-BenchForge-Role") or headers.get("x-benchforge-role", "")
        if role and role != "solver":
            return Fault.http_status(400, '{"error": {"message": "model not found"}}')
        return super().__call__(body, headers)


def test_a_reevolution_whose_every_evolver_call_fails_ends_failed_and_gives_its_seeds_back():
    cache.clear()
    world, release = remeasured_release()
    with FakeOpenAI() as server:
        server.responder = RefusingEvolver({})
        ModelEndpoint.objects.update(base_url=server.base_url, max_retries=0)
        ModelEndpoint.objects.filter(pk=world.campaign.evolver_id).update(model="evolver")
        first = living.reevolution_create(
            release=release, settings=REEVOLUTION_SETTINGS, launch=True
        )
        campaign = run_inline(campaign_id=first.campaign_id)

    assert campaign.state == "failed", (campaign.state, campaign.state_reason)
    assert campaign.state_reason.startswith("every candidate ended in an error (2 of 2;")
    assert "HTTP 400" in campaign.state_reason
    # Its seeds are given back: a second re-evolution takes the same saturated problems.
    second = living.reevolution_create(release=release, settings=REEVOLUTION_SETTINGS)
    assert set(second.retired) == set(first.retired) and len(second.retired) == 2
    assert ReEvolution.objects.filter(release=release).count() == 2


def test_two_reevolutions_in_the_same_second_get_their_own_names(monkeypatch):
    """(A double click, or a failed campaign re-evolved at once: the names clashed.)"""
    from datetime import UTC, datetime

    from django.utils import timezone as django_timezone

    cache.clear()
    world, release = remeasured_release()
    frozen = datetime(2026, 11, 28, 13, 35, 41, tzinfo=UTC)
    monkeypatch.setattr(django_timezone, "now", lambda: frozen)
    first = living.reevolution_create(release=release, settings=REEVOLUTION_SETTINGS)
    first.campaign.state = "cancelled"
    first.campaign.save(update_fields=["state"])
    second = living.reevolution_create(release=release, settings=REEVOLUTION_SETTINGS)
    assert first.campaign.name != second.campaign.name
    assert second.campaign.name.endswith("#2")
