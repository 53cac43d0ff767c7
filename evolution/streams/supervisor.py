"""The supervisor: outages pause or heal, never stall.

Run periodically by ``celery beat`` (task ``evolution.streams.supervise``, every
``CAMPAIGN_SUPERVISE_SECONDS``), it looks at every queued or running campaign of every kind:

- **A chain that went quiet is restarted.** Every tick of a campaign's current chain writes its
  heartbeat (``Campaign.ticked_at``). A broker restart loses the queued messages (and a worker
  drops the delayed ones it held when its connection broke), a failed publish ends a chain: when
  the heartbeat is older than ``CAMPAIGN_QUIET_SECONDS`` the supervisor starts a new chain. The
  new chain re-issues a ticket to every stream with no live lease, so any step message lost with
  the broker is replaced, and any old message still queued is stale and does nothing.
- **A campaign that cannot make progress is paused with the reason.** Progress is a step that
  completed (``WorkStream.updated_at``) or a state change of the campaign (launch, resume). With
  no progress for ``CAMPAIGN_STALL_SECONDS`` (0: never) the campaign is paused, naming how long
  and the last error its streams met; an admin resumes it once the cause is fixed.

Restarting a chain that was in fact alive costs one stale message per stream, never a
duplicate step: tickets and leases decide who may advance a stream.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from evolution.models import Campaign
from evolution.models.campaigns import CampaignState

from . import lifecycle
from .kinds import kind_for

log = logging.getLogger(__name__)


def quiet_seconds() -> float:
    return float(getattr(settings, "CAMPAIGN_QUIET_SECONDS", 120.0))


def stall_seconds() -> float:
    return float(getattr(settings, "CAMPAIGN_STALL_SECONDS", 3600.0))


@dataclass
class SupervisionReport:
    restarted: list[int] = field(default_factory=list)
    paused: list[int] = field(default_factory=list)
    checked: int = 0


def last_progress(campaign: Campaign):
    """When the campaign last moved: its last state change or its streams' last step."""
    kind = kind_for(campaign.kind)
    streams = kind.stream_model.objects.filter(campaign_id=campaign.pk)
    step = streams.aggregate(last=Max("updated_at"))["last"]
    moments = [m for m in (campaign.updated_at, campaign.started_at, step) if m is not None]
    return max(moments)


def last_error(campaign: Campaign) -> str:
    kind = kind_for(campaign.kind)
    error = (
        kind.stream_model.objects.filter(campaign_id=campaign.pk)
        .exclude(last_error="")
        .order_by("-updated_at")
        .values_list("last_error", flat=True)
        .first()
    )
    return error or ""


def stall_reason(campaign: Campaign, idle: float) -> str:
    reason = (
        f"no progress for {int(idle)} s (CAMPAIGN_STALL_SECONDS={int(stall_seconds())}): "
        "paused by the supervisor; resume once the cause is fixed"
    )
    error = last_error(campaign)
    if error:
        reason += f"; last error: {error}"
    return reason[:300]


def supervise(*, now=None) -> SupervisionReport:
    """One pass over the queued and running campaigns (see the module's docstring)."""
    now = now or timezone.now()
    report = SupervisionReport()
    quiet_before = now - timedelta(seconds=quiet_seconds())
    stall = stall_seconds()
    active = Campaign.objects.filter(state__in=[CampaignState.QUEUED, CampaignState.RUNNING])
    for campaign in active.order_by("pk"):
        report.checked += 1
        try:
            kind_for(campaign.kind)
        except LookupError:
            log.warning("campaign %s has no registered kind %r", campaign.pk, campaign.kind)
            continue
        if campaign.state == CampaignState.RUNNING and stall:
            idle = (now - last_progress(campaign)).total_seconds()
            if idle > stall:
                if lifecycle.campaign_pause_if_active(
                    campaign_id=campaign.pk, reason=stall_reason(campaign, idle)
                ):
                    report.paused.append(campaign.pk)
                    log.warning("campaign %s paused: no progress for %d s", campaign.pk, idle)
                continue
        heartbeat = campaign.ticked_at or campaign.updated_at
        if heartbeat is None or heartbeat < quiet_before:
            lifecycle.start_ticking(campaign.pk)
            report.restarted.append(campaign.pk)
            log.warning("campaign %s: its tick chain went quiet; started a new one", campaign.pk)
    return report
