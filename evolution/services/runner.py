"""The in-process runner: drives a campaign by calling the same step function the Celery tasks
call, with a thread pool instead of workers. Used by `make demo` (no broker needed) and
`run_campaign --inline`."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from django.db import connections
from django.utils import timezone

from evolution.models import Campaign, Lineage
from evolution.models.campaigns import CampaignState

from .campaigns import ACTIVE_LINEAGE_STATES
from .steps import lineage_advance


def _advance(lineage_id: int):
    try:
        return lineage_advance(lineage_id=lineage_id)
    finally:
        connections.close_all()


def campaign_run_inline(
    *,
    campaign_id: int,
    workers: int = 2,
    max_steps: int | None = None,
    on_progress: Callable[[Campaign], None] | None = None,
) -> Campaign:
    """Run until every lineage finished, the campaign is paused/cancelled, or ``max_steps``
    steps ran (then the campaign stays running and can be resumed by workers)."""
    now = timezone.now()
    Campaign.objects.filter(pk=campaign_id, state=CampaignState.QUEUED).update(
        state=CampaignState.RUNNING, state_reason="running (in-process runner)", started_at=now
    )
    steps_run = 0
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        while True:
            campaign = Campaign.objects.get(pk=campaign_id)
            if campaign.state != CampaignState.RUNNING:
                return campaign
            active = list(
                Lineage.objects.filter(
                    campaign_id=campaign_id, state__in=ACTIVE_LINEAGE_STATES
                ).values_list("pk", flat=True)
            )
            if not active:
                Campaign.objects.filter(pk=campaign_id, state=CampaignState.RUNNING).update(
                    state=CampaignState.COMPLETED,
                    state_reason="every lineage finished",
                    finished_at=timezone.now(),
                )
                return Campaign.objects.get(pk=campaign_id)
            if max_steps is not None:
                active = active[: max(0, max_steps - steps_run)]
                if not active:
                    return campaign
            reports = list(pool.map(_advance, active))
            steps_run += len(active)
            if on_progress:
                on_progress(campaign)
            if all(r.outcome == "skipped" for r in reports):
                time.sleep(0.2)  # every lineage is leased elsewhere; wait for the leases
