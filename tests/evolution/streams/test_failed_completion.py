"""A campaign with no work left whose every model call failed ends ``failed`` with the
commonest error, whatever its kind; one call answered is a completion."""

from __future__ import annotations

import pytest

from evolution.models import LLMCall
from evolution.models.campaigns import CampaignState
from evolution.streams.kinds import kind_for
from evolution.streams.lifecycle import campaign_finish
from tests.factories import CampaignFactory, LLMCallFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("kind", ["xcoder", "evosyn", "frontiersmith", "reasoning"])
def test_every_call_failed_is_a_failure_for_every_kind(kind):
    campaign = CampaignFactory(kind=kind, state=CampaignState.RUNNING)
    for _ in range(3):
        LLMCallFactory(campaign=campaign, status=LLMCall.Status.ERROR, error="HTTP 401: bad key")
    LLMCallFactory(campaign=campaign, status=LLMCall.Status.ERROR, error="timed out")

    assert campaign_finish(kind_for(kind), campaign) == CampaignState.FAILED
    campaign.refresh_from_db()
    assert campaign.state == CampaignState.FAILED
    assert campaign.state_reason == (
        "every model call failed (4 of 4; 3 of them: HTTP 401: bad key)"
    )


@pytest.mark.parametrize("kind", ["xcoder", "reasoning"])
def test_one_answered_call_is_a_completion(kind):
    campaign = CampaignFactory(kind=kind, state=CampaignState.RUNNING)
    LLMCallFactory(campaign=campaign, status=LLMCall.Status.ERROR, error="HTTP 401: bad key")
    LLMCallFactory(campaign=campaign, status=LLMCall.Status.OK)
    assert campaign_finish(kind_for(kind), campaign) == CampaignState.COMPLETED
    campaign.refresh_from_db()
    assert campaign.state_reason == kind_for(kind).completed_reason
