"""Pages of FrontierSmith campaigns: the list of this kind, creation, the campaign page
(settings, the coarse filter's false-positive / false-negative rates, the funnel per round,
candidates, launch / pause / resume / cancel) and a candidate page (formulations, operator and
parent, verdicts, divergences, the build ledger and the verifier). Evolution's campaign list
also sends this kind's campaigns here."""

from __future__ import annotations

from django.shortcuts import get_object_or_404, render

from accounts.roles import ADMIN, CURATOR, has_role, role_required
from evolution import pages
from evolution import selectors as evolution_selectors
from evolution.models.campaigns import CampaignKind

from . import selectors, services
from .ablation import MEASURES
from .config import settings_table
from .forms import FrontierCampaignForm
from .models import FrontierCampaign, FrontierCandidate, NoFilterAblation


def _get(pk: int) -> FrontierCampaign:
    return pages.kind_campaign_or_404(
        selectors.frontier_get, pk, FrontierCampaign.DoesNotExist, "FrontierSmith"
    )


def _campaigns():
    return evolution_selectors.campaign_list_rows(
        evolution_selectors.campaign_list()
        .filter(kind=CampaignKind.FRONTIERSMITH)
        .select_related("frontier")
        .order_by("-created_at")
    )


campaign_list = pages.kind_campaign_list("frontiersmith", _campaigns)
campaign_new = pages.kind_campaign_new(
    "frontiersmith", FrontierCampaignForm, services.frontier_campaign_create
)


@role_required(ADMIN, CURATOR)
def campaign_detail(request, pk: int):
    fc = _get(pk)
    return pages.render_campaign_page(
        request,
        "frontiersmith/campaign_detail.html",
        {
            "fc": fc,
            "campaign": fc.campaign,
            "settings_rows": settings_table(fc.campaign.settings),
            "rates": selectors.filter_rates(fc=fc),
            "funnel": selectors.funnel(fc=fc),
            "candidates": selectors.candidate_list(fc=fc),
            "can_control": has_role(request.user, ADMIN),
            **_ablation(fc),
        },
        live_body="frontiersmith/_live.html",
    )


def _ablation(fc: FrontierCampaign) -> dict:
    """The campaign's latest no-filter ablation, its measures as (label, filtered, no filter)
    rows, and, for an ablation arm, the ablation it belongs to."""
    ablation = fc.ablations.select_related("arm__campaign").first()
    rows = []
    if ablation is not None:
        filtered, no_filter = ablation.summary["filtered"], ablation.summary["no_filter"]
        rows = [(key, label, filtered.get(key), no_filter.get(key)) for key, label in MEASURES]
    arm_of = NoFilterAblation.objects.filter(arm=fc).select_related("frontier__campaign").first()
    return {"ablation": ablation, "ablation_rows": rows, "ablation_of": arm_of}


@role_required(ADMIN, CURATOR)
def candidate_detail(request, pk: int):
    candidate = get_object_or_404(
        FrontierCandidate.objects.select_related(
            "frontier__campaign", "parent", "accepted_problem"
        ),
        pk=pk,
    )
    return render(request, "frontiersmith/candidate_detail.html", {"c": candidate})
