"""Campaign numbers that agree with the campaign's state: no lineage is "active" while the
campaign is paused or finished, elapsed time leaves pauses out, and the controls follow the
state even on a page left open (the live poll replaces them)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from evolution.benchevolver import selectors as benchevolver_selectors
from evolution.benchevolver.models import LineageState
from evolution.models import Campaign
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import (
    campaign_cancel,
    campaign_launch,
    campaign_pause,
    campaign_resume,
)
from tests.factories import CampaignFactory, LineageFactory

pytestmark = pytest.mark.django_db


def _started(minutes_ago: float, **fields) -> Campaign:
    campaign = CampaignFactory(state=CampaignState.DRAFT, **fields)
    for position in range(6):
        LineageFactory(campaign=campaign, position=position, state=LineageState.PENDING)
    campaign_launch(campaign_id=campaign.pk)
    Campaign.objects.filter(pk=campaign.pk).update(
        state=CampaignState.RUNNING, started_at=timezone.now() - timedelta(minutes=minutes_ago)
    )
    return Campaign.objects.get(pk=campaign.pk)


def _shift_pause_start(campaign: Campaign, minutes_ago: float) -> None:
    """As if the pause had begun ``minutes_ago``."""
    Campaign.objects.filter(pk=campaign.pk).update(
        paused_at=timezone.now() - timedelta(minutes=minutes_ago)
    )


def test_no_lineage_is_active_while_the_campaign_is_paused():
    campaign = _started(10)
    running = benchevolver_selectors.campaign_progress(campaign)
    assert (running["lineages"]["active"], running["lineages"]["waiting"]) == (6, 0)

    campaign = campaign_pause(campaign_id=campaign.pk)
    paused = benchevolver_selectors.campaign_progress(campaign)
    assert (paused["lineages"]["active"], paused["lineages"]["waiting"]) == (0, 6)
    assert paused["lineages"]["finished"] == 0 and paused["eta_s"] is None

    campaign = campaign_cancel(campaign_id=campaign.pk)
    cancelled = benchevolver_selectors.campaign_progress(campaign)
    assert (cancelled["lineages"]["active"], cancelled["lineages"]["waiting"]) == (0, 6)


def test_the_paused_page_says_waiting_not_active(personas):
    campaign = campaign_pause(campaign_id=_started(10).pk)
    html = personas.curator.client.get(
        reverse("evolution:campaign_detail", args=[campaign.pk])
    ).content.decode()
    assert "lineages waiting (paused)" in html
    assert "lineages active" not in html
    assert "time left" not in html
    assert "(pauses excluded)" in html


def test_elapsed_time_leaves_every_pause_out():
    campaign = _started(60)  # running for an hour
    assert 3590 <= benchevolver_selectors.campaign_progress(campaign)["elapsed_s"] <= 3610

    campaign_pause(campaign_id=campaign.pk)
    _shift_pause_start(campaign, 20)  # paused 20 minutes ago: the clock stopped then
    stopped = benchevolver_selectors.campaign_progress(Campaign.objects.get(pk=campaign.pk))[
        "elapsed_s"
    ]
    assert 2390 <= stopped <= 2410

    campaign = campaign_resume(campaign_id=campaign.pk)
    assert campaign.paused_at is None and 1195 <= campaign.paused_seconds <= 1205
    Campaign.objects.filter(pk=campaign.pk).update(state=CampaignState.RUNNING)
    resumed = benchevolver_selectors.campaign_progress(Campaign.objects.get(pk=campaign.pk))[
        "elapsed_s"
    ]
    assert 2390 <= resumed <= 2410

    # A second pause, then a cancel while paused: the finished campaign's time stays without
    # either pause.
    campaign_pause(campaign_id=campaign.pk)
    _shift_pause_start(campaign, 5)
    campaign = campaign_cancel(campaign_id=campaign.pk)
    assert campaign.paused_at is None and 1495 <= campaign.paused_seconds <= 1505
    assert 2090 <= benchevolver_selectors.campaign_progress(campaign)["elapsed_s"] <= 2110


def test_a_pause_before_the_first_start_is_not_subtracted():
    campaign = CampaignFactory(state=CampaignState.DRAFT)
    campaign_launch(campaign_id=campaign.pk)
    campaign_pause(campaign_id=campaign.pk)  # paused while still queued
    _shift_pause_start(campaign, 30)
    campaign = campaign_resume(campaign_id=campaign.pk)
    assert campaign.paused_seconds == 0.0
    assert campaign.elapsed_seconds() == 0.0  # never started


def test_the_live_poll_replaces_the_controls_so_a_finished_campaign_has_none(personas):
    campaign = _started(1)
    url = reverse("evolution:campaign_detail", args=[campaign.pk])
    page = personas.admin.client.get(url).content.decode()
    assert reverse("evolution:campaign_control", args=[campaign.pk, "pause"]) in page

    Campaign.objects.filter(pk=campaign.pk).update(
        state=CampaignState.COMPLETED, finished_at=timezone.now()
    )
    poll = personas.admin.client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert 'id="controls" hx-swap-oob="true"' in poll
    assert reverse("evolution:campaign_control", args=[campaign.pk, "pause"]) not in poll
    assert reverse("evolution:campaign_control", args=[campaign.pk, "cancel"]) not in poll
    # A curator has no controls, on the page or in the poll.
    curator_poll = personas.curator.client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert 'id="controls"' not in curator_poll
