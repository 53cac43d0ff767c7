"""Pages of FrontierSmith campaigns: the campaign page (settings, the coarse filter's
false-positive / false-negative rates, the funnel per round, candidates) and a candidate page
(formulations, operator and parent, verdicts, divergences, the build ledger and the verifier).
The campaign list is evolution's, which sends this kind's campaigns here."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from benchapp.roles import ADMIN, CURATOR, role_required
from evolution.services import campaigns as campaign_services

from . import selectors
from .config import settings_table
from .models import FrontierCampaign, FrontierCandidate


def _get(pk: int) -> FrontierCampaign:
    try:
        return selectors.frontier_get(campaign_id=pk)
    except FrontierCampaign.DoesNotExist:
        raise Http404("No FrontierSmith campaign with this id.") from None


@role_required(ADMIN, CURATOR)
def campaign_detail(request, pk: int):
    fc = _get(pk)
    return render(
        request,
        "frontiersmith/campaign_detail.html",
        {
            "fc": fc,
            "campaign": fc.campaign,
            "settings_rows": settings_table(fc.campaign.settings),
            "rates": selectors.filter_rates(fc=fc),
            "funnel": selectors.funnel(fc=fc),
            "candidates": selectors.candidate_list(fc=fc),
        },
    )


@role_required(ADMIN, CURATOR)
def candidate_detail(request, pk: int):
    candidate = get_object_or_404(
        FrontierCandidate.objects.select_related(
            "frontier__campaign", "parent", "accepted_problem"
        ),
        pk=pk,
    )
    return render(request, "frontiersmith/candidate_detail.html", {"c": candidate})


_ACTIONS = {
    "launch": campaign_services.campaign_launch,
    "pause": campaign_services.campaign_pause,
    "resume": campaign_services.campaign_resume,
    "cancel": campaign_services.campaign_cancel,
}


@role_required(ADMIN)
@require_POST
def campaign_control(request, pk: int, action: str):
    _get(pk)
    service = _ACTIONS.get(action)
    if service is None:
        return HttpResponseNotAllowed(list(_ACTIONS))
    try:
        campaign = service(campaign_id=pk)
    except campaign_services.TransitionError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Campaign {campaign.name}: {campaign.state}.")
    return redirect("frontiersmith:campaign_detail", pk)
