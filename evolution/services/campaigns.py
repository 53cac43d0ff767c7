"""Campaign lifecycle: create, launch, pause, resume, cancel, tick, budget. Declared state graph
in models.CAMPAIGN_TRANSITIONS; every transition is a conditional UPDATE so concurrent callers
cannot both win."""

from __future__ import annotations

import contextlib

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from evolution.models import Campaign, Lineage, ModelEndpoint, Panel, ProblemSet
from evolution.models.campaigns import (
    CAMPAIGN_TRANSITIONS,
    CampaignKind,
    CampaignState,
    LineageState,
)
from evolution.pipeline.config import EvolutionSettings

ACTIVE_LINEAGE_STATES = (LineageState.PENDING, LineageState.EVOLVING)


class TransitionError(Exception):
    """The campaign is not in a state that allows this action."""


def campaign_start_ticking(*, campaign_id: int) -> None:
    """Start a new tick chain for the campaign (replacing any older chain) after commit."""
    from evolution.streams import runner

    runner.start_ticking(campaign_id)


def _enqueue_tick(campaign_id: int) -> None:
    campaign_start_ticking(campaign_id=campaign_id)


@transaction.atomic
def campaign_create(
    *,
    name: str,
    seed_set: ProblemSet,
    evolver: ModelEndpoint,
    panel: Panel,
    settings: dict | None = None,
    kind: str = CampaignKind.BENCHEVOLVER,
    seed_limit: int | None = None,
    budget_max_calls: int | None = None,
    budget_max_tokens: int | None = None,
    budget_max_cost=None,
    role_endpoints: dict | None = None,
    created_by=None,
) -> Campaign:
    """Validate the algorithm settings (ValidationError names each bad key) and create the
    campaign with one lineage per seed, in draft."""
    if not name.strip():
        raise ValidationError({"name": ["a campaign needs a name"]})
    validated = EvolutionSettings.from_dict(settings)
    if not panel.members.exists():
        raise ValidationError({"panel": [f"panel {panel.name!r} has no target models"]})
    seeds = list(seed_set.problems.order_by("id"))
    if seed_limit:
        seeds = seeds[:seed_limit]
    if not seeds:
        raise ValidationError({"seed_set": [f"seed set {seed_set.name!r} has no problems"]})
    endpoints = [evolver, *(m.endpoint for m in panel.members.select_related("endpoint"))]
    role_endpoints = role_endpoints or {}
    for role, endpoint_id in role_endpoints.items():
        endpoint = ModelEndpoint.objects.filter(pk=endpoint_id).first()
        if endpoint is None:
            raise ValidationError(
                {"role_endpoints": [f"role {role}: endpoint {endpoint_id} does not exist"]}
            )
        endpoints.append(endpoint)
    campaign = Campaign.objects.create(
        name=name.strip(),
        kind=kind,
        seed_set=seed_set,
        seed_limit=seed_limit,
        evolver=evolver,
        panel=panel,
        role_endpoints=role_endpoints,
        settings=validated.to_dict(),
        budget_max_calls=budget_max_calls,
        budget_max_tokens=budget_max_tokens,
        budget_max_cost=budget_max_cost,
        replayed=all(e.is_replay for e in endpoints),
        created_by=created_by,
    )
    Lineage.objects.bulk_create(
        [
            Lineage(campaign=campaign, seed=seed, parent=seed, position=i)
            for i, seed in enumerate(seeds)
        ]
    )
    return campaign


def _transition(
    campaign_id: int,
    target: str,
    *,
    reason: str = "",
    extra: dict | None = None,
    only_from: tuple[str, ...] | None = None,
) -> Campaign:
    campaign = Campaign.objects.get(pk=campaign_id)
    allowed_from = [s for s, targets in CAMPAIGN_TRANSITIONS.items() if target in targets]
    if only_from is not None:
        allowed_from = [s for s in allowed_from if s in only_from]
    fields = {
        "state": target,
        "state_reason": reason[:300],
        "updated_at": timezone.now(),
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


@transaction.atomic
def campaign_launch(*, campaign_id: int) -> Campaign:
    campaign = _transition(
        campaign_id, CampaignState.QUEUED, reason="launched", only_from=(CampaignState.DRAFT,)
    )
    _enqueue_tick(campaign.pk)
    return campaign


@transaction.atomic
def campaign_pause(*, campaign_id: int, reason: str = "paused by an admin") -> Campaign:
    return _transition(campaign_id, CampaignState.PAUSED, reason=reason)


@transaction.atomic
def campaign_resume(*, campaign_id: int) -> Campaign:
    campaign = _transition(
        campaign_id, CampaignState.QUEUED, reason="resumed", only_from=(CampaignState.PAUSED,)
    )
    # Messages issued before the pause may still sit in a queue: new tickets make them stale.
    Lineage.objects.filter(campaign_id=campaign_id, state__in=ACTIVE_LINEAGE_STATES).update(
        ticket=""
    )
    _enqueue_tick(campaign.pk)
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


def tick_seconds() -> float:
    return float(getattr(django_settings, "CAMPAIGN_TICK_SECONDS", 15))


def lease_seconds() -> float:
    return float(getattr(django_settings, "LINEAGE_LEASE_SECONDS", 1800))


def campaign_tick(*, campaign_id: int, token: str | None = None, reschedule: bool = True) -> str:
    """The one tick (``evolution.streams.runner.tick``): start a queued campaign, dispatch its
    kind's work that has none in flight, finish it when no work is left, come back later."""
    from evolution.streams import runner

    return runner.tick(campaign_id=campaign_id, token=token, reschedule=reschedule)
