"""Campaign lifecycle: the campaign row every kind's create service makes (each method adds its
own rows: BenchEvolver's in evolution/benchevolver/services.py), launch, pause, resume, cancel,
tick, budget. Declared state graph in models.CAMPAIGN_TRANSITIONS; every transition is a
conditional UPDATE so concurrent callers cannot both win."""

from __future__ import annotations

import contextlib
from decimal import Decimal

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from evolution.models import Campaign, Lineage, ModelEndpoint
from evolution.models.campaigns import (
    CAMPAIGN_TRANSITIONS,
    CampaignState,
    LineageState,
)

ACTIVE_LINEAGE_STATES = (LineageState.PENDING, LineageState.EVOLVING)


class TransitionError(Exception):
    """The campaign is not in a state that allows this action."""


def campaign_settings_validate(settings_class, *, name: str, settings: dict | None):
    """The first checks of every kind's create service: a campaign needs a name, then its
    algorithm settings are validated by the kind's settings class (``ValidationError`` naming
    each bad key). Returns the validated settings."""
    if not name.strip():
        raise ValidationError({"name": ["a campaign needs a name"]})
    return settings_class.from_dict(settings)


def role_endpoints_resolve(role_endpoints: dict | None) -> list[ModelEndpoint]:
    """The endpoints ``role_endpoints`` ({role: endpoint id}) names, in its order;
    ``ValidationError`` on ``role_endpoints`` naming a role whose endpoint does not exist."""
    found = []
    for role, endpoint_id in (role_endpoints or {}).items():
        endpoint = ModelEndpoint.objects.filter(pk=endpoint_id).first()
        if endpoint is None:
            raise ValidationError(
                {"role_endpoints": [f"role {role}: endpoint {endpoint_id} does not exist"]}
            )
        found.append(endpoint)
    return found


INT_MAX = 2**31 - 1  # an integer column (PositiveIntegerField)
BIGINT_MAX = 2**63 - 1  # a bigint column (PositiveBigIntegerField)
COST_MAX = Decimal("99999999.9999")  # DecimalField(max_digits=12, decimal_places=4)
# A campaign's own bounded fields: (least, greatest). The creation forms and APIs refuse what
# lies outside before calling a create service; the service checks again for every caller.
CAMPAIGN_BOUNDS = {
    "seed_limit": (1, INT_MAX),
    "budget_max_calls": (1, INT_MAX),
    "budget_max_tokens": (1, BIGINT_MAX),
    "budget_max_cost": (Decimal(0), COST_MAX),
}


def campaign_bounds_check(**values) -> None:
    """``ValidationError`` keyed by each field of ``values`` (None is unset) outside
    ``CAMPAIGN_BOUNDS``: a negative budget or seed limit reached the database's check
    constraints as a 500 before."""
    errors = {}
    for field, value in values.items():
        if value is None:
            continue
        least, greatest = CAMPAIGN_BOUNDS[field]
        try:
            inside = least <= value <= greatest
        except (TypeError, ArithmeticError):  # not a number, or a NaN Decimal
            inside = False
        if not inside:
            errors[field] = [f"must be between {least} and {greatest}, got {value}"]
    if errors:
        raise ValidationError(errors)


def campaign_record_create(
    *,
    kind: str,
    name: str,
    validated,
    endpoints: list[ModelEndpoint],
    budget_max_calls: int | None = None,
    budget_max_tokens: int | None = None,
    budget_max_cost=None,
    created_by=None,
    **fields,
) -> Campaign:
    """The ``Campaign`` row of a new draft campaign of ``kind``, shared by every kind's create
    service: its validated settings, its budget, and ``replayed`` when every endpoint it uses
    (``endpoints``) replays a cassette. ``fields``: the kind's other columns (seed set, seed
    limit, evolver, panel, role endpoints)."""
    campaign_bounds_check(
        seed_limit=fields.get("seed_limit"),
        budget_max_calls=budget_max_calls,
        budget_max_tokens=budget_max_tokens,
        budget_max_cost=budget_max_cost,
    )
    return Campaign.objects.create(
        name=name.strip(),
        kind=kind,
        settings=validated.to_dict(),
        budget_max_calls=budget_max_calls,
        budget_max_tokens=budget_max_tokens,
        budget_max_cost=budget_max_cost,
        replayed=all(e.is_replay for e in endpoints),
        created_by=created_by,
        **fields,
    )


def campaign_start_ticking(*, campaign_id: int) -> None:
    """Start a new tick chain for the campaign (replacing any older chain) after commit."""
    from evolution.streams import runner

    runner.start_ticking(campaign_id)


def _enqueue_tick(campaign_id: int) -> None:
    campaign_start_ticking(campaign_id=campaign_id)


def _transition(
    campaign_id: int,
    target: str,
    *,
    reason: str = "",
    extra: dict | None = None,
    only_from: tuple[str, ...] | None = None,
) -> Campaign:
    # Locked: the pause bookkeeping below is computed from the row it replaces.
    campaign = Campaign.objects.select_for_update().get(pk=campaign_id)
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
