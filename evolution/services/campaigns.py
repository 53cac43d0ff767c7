"""Campaign services: the campaign row every kind's create service makes (each method adds its
own rows: BenchEvolver's in evolution/benchevolver/services.py), and the lifecycle's actions the
pages and the API call (launch, pause, resume, cancel: ``evolution.streams.lifecycle``, the one
module every campaign transition goes through, which the runner uses too)."""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError

from evolution.models import Campaign, ModelEndpoint
from evolution.streams.lifecycle import (
    TransitionError,
    campaign_cancel,
    campaign_launch,
    campaign_pause,
    campaign_resume,
)

__all__ = [
    "TransitionError",
    "campaign_bounds_check",
    "campaign_cancel",
    "campaign_launch",
    "campaign_pause",
    "campaign_record_create",
    "campaign_resume",
    "campaign_settings_validate",
    "campaign_tick",
    "role_endpoints_resolve",
]


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


def campaign_tick(*, campaign_id: int, token: str | None = None, reschedule: bool = True) -> str:
    """The one tick (``evolution.streams.runner.tick``): start a queued campaign, dispatch its
    kind's work that has none in flight, finish it when no work is left, come back later."""
    from evolution.streams import runner

    return runner.tick(campaign_id=campaign_id, token=token, reschedule=reschedule)
