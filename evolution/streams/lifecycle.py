"""A campaign's lifecycle, one module for every way a campaign moves: launch, start, pause,
resume, cancel, pause for budget, finish (completed or failed), and the tick chain a launch or a
resume starts. The declared state graph is ``models.CAMPAIGN_TRANSITIONS``; every transition is
a conditional UPDATE so that concurrent callers cannot both win.

The runner (``runner``), the Celery tick, the in-process runner, the supervisor and the campaign
services all move campaigns through these functions; this module imports none of them (the
tick chain is started by task name), so the lifecycle sits below the runner.
"""

from __future__ import annotations

import contextlib
import secrets
from collections import Counter

from django.conf import settings as django_settings
from django.db import transaction
from django.utils import timezone

from evolution.models import Campaign, LLMCall
from evolution.models.campaigns import CAMPAIGN_TRANSITIONS, CampaignState

from .kinds import kind_for

STEP_TASK = "evolution.streams.step"
TICK_TASK = "evolution.streams.tick"
RUNNING_REASON = "running"


class TransitionError(Exception):
    """The campaign is not in a state that allows this action."""


def tick_seconds() -> float:
    return float(getattr(django_settings, "CAMPAIGN_TICK_SECONDS", 15))


def lease_seconds() -> float:
    return float(getattr(django_settings, "LINEAGE_LEASE_SECONDS", 1800))


def send_task(task_name: str, args: tuple, **options) -> None:
    """Send a task by name (the task modules import the runner, never the other way)."""
    from celery import current_app

    current_app.signature(task_name, args=args, **options).apply_async()


def start_ticking(campaign_id: int) -> None:
    """Start a new tick chain for the campaign (replacing any older chain) after commit."""
    token = secrets.token_hex(8)
    # ``ticked_at``: the chain's heartbeat (the supervisor restarts a chain that went quiet).
    Campaign.objects.filter(pk=campaign_id).update(tick_token=token, ticked_at=timezone.now())
    transaction.on_commit(lambda: send_task(TICK_TASK, (campaign_id, token)))


def _transition(
    campaign_id: int,
    target: str,
    *,
    reason: str = "",
    extra: dict | None = None,
    only_from: tuple[str, ...] | None = None,
) -> Campaign:
    # Locked: the pause bookkeeping below is computed from the row it replaces. A transition
    # never changes the campaign's key, so it takes the lock that lets rows pointing at the
    # campaign be inserted meanwhile (FOR NO KEY UPDATE), as a step still in flight does.
    campaign = Campaign.objects.select_for_update(no_key=True).get(pk=campaign_id)
    allowed_from = [s for s, targets in CAMPAIGN_TRANSITIONS.items() if target in targets]
    if only_from is not None:
        allowed_from = [s for s in allowed_from if s in only_from]
    now = timezone.now()
    fields = {
        "state": target,
        "state_reason": reason[:300],
        "updated_at": now,
        **_pause_clock(campaign, target, now),
        **(extra or {}),
    }
    updated = Campaign.objects.filter(pk=campaign_id, state__in=allowed_from).update(**fields)
    if not updated:
        campaign.refresh_from_db()
        raise TransitionError(
            f"campaign {campaign.name!r} is {campaign.state}; it cannot become {target}"
        )
    campaign.refresh_from_db()
    return campaign


def _pause_clock(campaign: Campaign, target: str, now) -> dict:
    """The pause bookkeeping of a transition: a pause starts the clock standing still, leaving
    a pause adds its length (from the first start on) to ``paused_seconds``."""
    if target == CampaignState.PAUSED:
        return {"paused_at": campaign.paused_at or now}
    if campaign.state != CampaignState.PAUSED:
        return {}
    paused_at = campaign.paused_at
    if paused_at is None or campaign.started_at is None:
        return {"paused_at": None}
    since = max(paused_at, campaign.started_at)
    return {
        "paused_at": None,
        "paused_seconds": campaign.paused_seconds + max(0.0, (now - since).total_seconds()),
    }


@transaction.atomic
def campaign_launch(*, campaign_id: int) -> Campaign:
    campaign = _transition(
        campaign_id, CampaignState.QUEUED, reason="launched", only_from=(CampaignState.DRAFT,)
    )
    start_ticking(campaign.pk)
    return campaign


def campaign_start(*, campaign_id: int) -> None:
    """Mark a queued campaign running (its first tick, or the in-process runner); a campaign in
    any other state is left as it is. ``started_at`` is kept across pauses (migration 0005)."""
    now = timezone.now()
    Campaign.objects.filter(pk=campaign_id, state=CampaignState.QUEUED).update(
        state=CampaignState.RUNNING, state_reason=RUNNING_REASON, started_at=now, updated_at=now
    )


@transaction.atomic
def campaign_pause(*, campaign_id: int, reason: str = "paused by an admin") -> Campaign:
    return _transition(campaign_id, CampaignState.PAUSED, reason=reason)


def campaign_pause_if_active(*, campaign_id: int, reason: str) -> bool:
    """Pause a queued or running campaign with ``reason``; False when it was neither."""
    try:
        campaign_pause(campaign_id=campaign_id, reason=reason)
    except TransitionError:
        return False
    return True


@transaction.atomic
def campaign_resume(*, campaign_id: int) -> Campaign:
    # Messages issued before the pause may still sit in a queue: new tickets make them stale.
    # The streams first, then the campaign: the order a step still in flight takes them (its
    # stream, then the campaign's counters), so the two never wait for each other in a circle.
    # A campaign that is not paused refuses below, and this is rolled back with it.
    kind = kind_for(Campaign.objects.values_list("kind", flat=True).get(pk=campaign_id))
    kind.stream_model.objects.filter(campaign_id=campaign_id).filter(kind.active_streams).update(
        ticket=""
    )
    campaign = _transition(
        campaign_id, CampaignState.QUEUED, reason="resumed", only_from=(CampaignState.PAUSED,)
    )
    start_ticking(campaign.pk)
    return campaign


@transaction.atomic
def campaign_cancel(*, campaign_id: int, reason: str = "cancelled by an admin") -> Campaign:
    return _transition(
        campaign_id, CampaignState.CANCELLED, reason=reason, extra={"finished_at": timezone.now()}
    )


def campaign_pause_for_budget(*, campaign_id: int, reason: str) -> None:
    """Called by a step that hit the budget; a campaign already paused or finished stays so."""
    with contextlib.suppress(TransitionError):
        campaign_pause(campaign_id=campaign_id, reason=f"budget reached: {reason}")


def campaign_fail(*, campaign_id: int, reason: str) -> None:
    """End a running campaign as failed with ``reason`` (a barrier that keeps failing)."""
    now = timezone.now()
    Campaign.objects.filter(pk=campaign_id, state=CampaignState.RUNNING).update(
        state=CampaignState.FAILED, state_reason=reason[:300], finished_at=now, updated_at=now
    )


def every_call_failed(campaign: Campaign) -> str | None:
    """The failure of any kind that declares none of its own: it asked models and not one call
    got an answer. The reason names the commonest error."""
    calls = LLMCall.objects.filter(campaign_id=campaign.pk)
    total = calls.count()
    if not total or calls.filter(status=LLMCall.Status.OK).exists():
        return None
    errors = Counter(calls.values_list("error", flat=True))
    error, times = errors.most_common(1)[0]
    return f"every model call failed ({total} of {total}; {times} of them: {error[:160]})"


def campaign_finish(kind, campaign: Campaign) -> str:
    """End a running campaign whose kind (``streams.kinds.Kind``) has no work left:
    ``completed`` with the kind's label, or ``failed`` with the reason when the kind says what
    it did amounts to a failure (a campaign whose every model call was refused is not
    "finished"). The Celery tick and the in-process runner both end a campaign here."""
    why = (kind.failure or every_call_failed)(campaign)
    state = CampaignState.FAILED if why else CampaignState.COMPLETED
    now = timezone.now()
    Campaign.objects.filter(pk=campaign.pk, state=CampaignState.RUNNING).update(
        state=state,
        state_reason=(why or kind.completed_reason)[:300],
        finished_at=now,
        updated_at=now,
    )
    return state
