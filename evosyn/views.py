"""Pages of EvoSyn campaigns: list, creation, the campaign page (the score-per-iteration chart
and the latest ablation's charts, each an HTML shell plus a JSON data endpoint) with its launch /
pause / resume / cancel controls, strategy source, and the random-test control dataset."""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from accounts.roles import ADMIN, CURATOR, has_role, role_required
from evolution import pages
from evolution.measurement import selectors as measurement_selectors

from . import selectors, services
from .config import EvoSynSettings, settings_table
from .forms import EvoSynCampaignForm
from .kind import kept_problems
from .models import ControlSet, EvoSynCampaign, InstanceRole, Strategy


def _get(pk: int) -> EvoSynCampaign:
    return pages.kind_campaign_or_404(
        selectors.evosyn_get, pk, EvoSynCampaign.DoesNotExist, "EvoSyn"
    )


campaign_list = pages.kind_campaign_list("evosyn", selectors.campaign_list)
campaign_new = pages.kind_campaign_new(
    "evosyn", EvoSynCampaignForm, services.evosyn_campaign_create
)


@role_required(ADMIN, CURATOR)
def campaign_detail(request, pk: int):
    esc = _get(pk)
    context = {
        "esc": esc,
        "campaign": esc.campaign,
        "summary": selectors.summary(esc=esc),
        "settings_rows": settings_table(esc.campaign.settings),
        "consistency_k": EvoSynSettings.from_dict(esc.campaign.settings).consistency_k,
        "strategies": esc.strategies.order_by("-score", "version")[:50],
        "seeds": selectors.instance_rows(esc=esc, role=InstanceRole.SEED),
        "synthetic": selectors.instance_rows(esc=esc, role=InstanceRole.SYNTHETIC),
        "controls": esc.controls.all()[:10],
        "ablation": selectors.latest_ablation(esc=esc),
        "can_control": has_role(request.user, ADMIN),
        "measurement": measurement_selectors.kept_measurement(
            esc.campaign, EvoSynSettings, kept_problems(esc.campaign)
        ),
    }
    return pages.render_campaign_page(
        request, "evosyn/campaign_detail.html", context, live_body="evosyn/_live.html"
    )


@role_required(ADMIN, CURATOR)
def campaign_scores(request, pk: int):
    return JsonResponse(selectors.score_series(esc=_get(pk)))


@role_required(ADMIN, CURATOR)
def campaign_ablation(request, pk: int):
    """The latest ablation's chart data (Figure 4b, Table 1); 404 before the first one."""
    ablation = selectors.latest_ablation(esc=_get(pk))
    if ablation is None:
        raise Http404("No ablation of this campaign yet.")
    return JsonResponse(selectors.ablation_series(ablation=ablation))


@role_required(ADMIN, CURATOR)
def strategy_source(request, pk: int, version: int):
    strategy = get_object_or_404(Strategy, evosyn_id=pk, version=version)
    return HttpResponse(strategy.code, content_type="text/x-python; charset=utf-8")


@require_POST
@role_required(ADMIN, CURATOR)
def control_build(request, pk: int):
    esc = _get(pk)
    try:
        rng_seed = int(request.POST.get("rng_seed") or 0)
        control = services.evosyn_control_build(
            campaign_id=esc.pk,
            rng_seed=rng_seed,
            created_by=request.user,
            variant=request.POST.get("variant") or "random",
        )
    except ValueError:
        messages.error(request, "The random seed must be an integer.")
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"Built {control.get_variant_display()}.")
    return redirect("evosyn:campaign_detail", pk=esc.pk)


@role_required(ADMIN, CURATOR)
def control_download(request, pk: int, control_id: int):
    control = get_object_or_404(ControlSet, evosyn_id=pk, pk=control_id)
    body = "".join(json.dumps(item) + "\n" for item in control.items)
    response = HttpResponse(body, content_type="application/jsonl; charset=utf-8")
    response["Content-Disposition"] = (
        f'attachment; filename="evosyn-{pk}-{control.variant}-{control.pk}.jsonl"'
    )
    return response
