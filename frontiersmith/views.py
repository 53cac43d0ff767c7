"""Pages of FrontierSmith campaigns: the list of this kind, creation, the campaign page
(settings, the coarse filter's false-positive / false-negative rates, the funnel per round,
candidates, launch / pause / resume / cancel) and a candidate page (formulations, operator and
parent, verdicts, divergences, the build ledger and the verifier). Evolution's campaign list
also sends this kind's campaigns here."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from benchapp.roles import ADMIN, CURATOR, has_role, role_required
from evolution import selectors as evolution_selectors
from evolution.models.campaigns import CampaignKind
from evolution.services import campaigns as campaign_services
from evolution.views import campaign_control_response

from . import selectors, services
from .config import settings_table
from .forms import FrontierCampaignForm
from .models import FrontierCampaign, FrontierCandidate


def _get(pk: int) -> FrontierCampaign:
    try:
        return selectors.frontier_get(campaign_id=pk)
    except FrontierCampaign.DoesNotExist:
        raise Http404("No FrontierSmith campaign with this id.") from None


@role_required(ADMIN, CURATOR)
def campaign_list(request):
    campaigns = (
        evolution_selectors.campaign_list()
        .filter(kind=CampaignKind.FRONTIERSMITH)
        .select_related("frontier")
        .order_by("-created_at")
    )
    return render(request, "frontiersmith/campaign_list.html", {"campaigns": campaigns})


@role_required(ADMIN)
def campaign_new(request):
    form = FrontierCampaignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            # Create and launch together: a launch that fails leaves no draft behind.
            with transaction.atomic():
                campaign = services.frontier_campaign_create(
                    name=data["name"],
                    seed_set=data["seed_set"],
                    mutator_endpoint=data["mutator_endpoint"],
                    solver_endpoint=data["solver_endpoint"],
                    settings=form.settings_dict(),
                    seed_limit=data["seed_limit"],
                    calibration_closed=data["calibration_closed"],
                    calibration_open=data["calibration_open"],
                    budget_max_calls=data["budget_max_calls"],
                    budget_max_tokens=data["budget_max_tokens"],
                    budget_max_cost=data["budget_max_cost"],
                    created_by=request.user,
                )
                if data["launch"]:
                    campaign = campaign_services.campaign_launch(campaign_id=campaign.pk)
        except ValidationError as exc:
            for key, errors in exc.message_dict.items():
                field = f"setting_{key}" if f"setting_{key}" in form.fields else key
                form.add_error(field if field in form.fields else None, errors)
        else:
            done = " and launched." if data["launch"] else ". Launch it when ready."
            messages.success(request, f"Campaign {campaign.name} created{done}")
            return redirect("frontiersmith:campaign_detail", campaign.pk)
    return render(request, "frontiersmith/campaign_new.html", {"form": form})


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
            "can_control": has_role(request.user, ADMIN),
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


@role_required(ADMIN)
@require_POST
def campaign_control(request, pk: int, action: str):
    _get(pk)
    return campaign_control_response(
        request, pk=pk, action=action, detail_view="frontiersmith:campaign_detail"
    )
