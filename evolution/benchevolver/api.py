"""BenchEvolver's campaigns over HTTP: its own fields (the evolver and the target panel), the
rows they name and its create service, on the create operation every kind shares
(``evolution.api.campaigns``), and its progress counts.

The operations answer at ``POST /api/campaigns`` and ``GET /api/campaigns/{id}/progress``, the
paths they always had: django-ninja gives a path to one router, and ``GET /api/campaigns``
(every kind's campaigns) is the platform's, so the platform's router mounts these functions
(``evolution/api/__init__.py``).
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404

from accounts.roles import ADMIN, CURATOR
from evolution.campaign_api import (
    KindCampaignIn,
    References,
    create_campaign_response,
    require,
)
from evolution.models import Campaign

from . import selectors, services


class CampaignIn(KindCampaignIn):
    evolver_id: int
    panel_id: int


def _references(payload: CampaignIn) -> References:
    refs = References()
    refs.problem_set("seed_set", payload.seed_set, label="seed set")
    refs.endpoint("evolver_id", payload.evolver_id)
    refs.panel("panel_id", payload.panel_id)
    return refs


def campaign_create(request, payload: CampaignIn):
    """Admins only. An unknown seed set, evolver or panel → 400 naming the field; a bad setting
    → 400 whose ``errors`` are keyed by the setting's name; with ``launch`` the campaign is
    launched in the same transaction. Nothing is created on any 400."""
    return create_campaign_response(
        request,
        payload,
        _references(payload),
        lambda found, **common: services.campaign_create(
            **common,
            seed_set=found["seed_set"],
            evolver=found["evolver_id"],
            panel=found["panel_id"],
        ),
        lambda pk: Campaign.objects.select_related("seed_set", "evolver", "panel").get(pk=pk),
    )


def campaign_progress(request, campaign_id: int):
    """Admins and curators: the lineage and candidate counts of the live campaign page."""
    require(request, ADMIN, CURATOR)
    return selectors.campaign_progress(get_object_or_404(Campaign, pk=campaign_id))
