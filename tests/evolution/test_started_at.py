"""Resuming keeps a campaign's started_at, so its elapsed time and ETA do not restart."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from evolution.models import Campaign
from evolution.models.campaigns import CampaignState
from evolution.services import campaigns as campaign_services
from tests.factories import CampaignFactory

pytestmark = pytest.mark.django_db


def test_pause_and_resume_keep_the_first_start(django_capture_on_commit_callbacks):
    first = timezone.now() - timedelta(hours=3)
    campaign = CampaignFactory()
    Campaign.objects.filter(pk=campaign.pk).update(state=CampaignState.RUNNING, started_at=first)

    with django_capture_on_commit_callbacks(execute=False):
        campaign_services.campaign_pause(campaign_id=campaign.pk)
        campaign_services.campaign_resume(campaign_id=campaign.pk)
    # What every kind's tick does with a queued campaign (resumed ones included).
    Campaign.objects.filter(pk=campaign.pk, state=CampaignState.QUEUED).update(
        state=CampaignState.RUNNING, started_at=timezone.now()
    )

    campaign.refresh_from_db()
    assert campaign.state == CampaignState.RUNNING
    assert campaign.started_at == first


def test_the_first_start_is_still_recorded():
    campaign = CampaignFactory()
    assert campaign.started_at is None
    now = timezone.now()
    Campaign.objects.filter(pk=campaign.pk).update(started_at=now)
    campaign.refresh_from_db()
    assert campaign.started_at == now
