"""Pages of X-Coder campaigns: list, creation, the campaign page (feature counts before and
after evolution, the browsable tree, tasks with their reasons) and the task page (subtree,
strategy, gates, tests, candidates and the vote matrix). Admins and curators only."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import render

from benchapp.roles import ADMIN, CURATOR, has_role, role_required
from evolution.measurement import selectors as measurement_selectors
from evolution.views import campaign_new_response, render_campaign_page

from . import selectors, services
from .config import XcoderSettings
from .forms import XcoderCampaignForm
from .kind import kept_problems
from .models import SynthTask, XcoderCampaign


def _get(pk: int) -> XcoderCampaign:
    try:
        return selectors.xcoder_get(campaign_id=pk)
    except XcoderCampaign.DoesNotExist:
        raise Http404("No X-Coder campaign with this id.")


@role_required(ADMIN, CURATOR)
def campaign_list(request):
    return render(request, "xcoder/campaign_list.html", {"campaigns": selectors.campaign_list()})


@role_required(ADMIN)
def campaign_new(request):
    return campaign_new_response(
        request,
        form=XcoderCampaignForm(request.POST or None),
        template="xcoder/campaign_new.html",
        create=services.xcoder_campaign_create,
    )


@role_required(ADMIN, CURATOR)
def campaign_detail(request, pk: int):
    xc = _get(pk)
    context = {
        "xc": xc,
        "campaign": xc.campaign,
        "settings": XcoderSettings.from_dict(xc.campaign.settings).rows(),
        "solvers": list(xc.solver_endpoints.order_by("name")),
        "counts": selectors.count_rows(xc),
        "tree": selectors.feature_tree(xc),
        "tasks": selectors.task_list(xc),
        "status_counts": selectors.status_counts(xc),
        "reasons": selectors.discard_reasons(xc),
        "can_control": has_role(request.user, ADMIN),
        "measurement": measurement_selectors.campaign_context(
            xc.campaign,
            enabled=XcoderSettings.from_dict(xc.campaign.settings).measure_kept,
            kept_count=kept_problems(xc.campaign).count(),
        ),
    }
    return render_campaign_page(
        request, "xcoder/campaign_detail.html", context, live_body="xcoder/_live.html"
    )


@role_required(ADMIN, CURATOR)
def task_detail(request, pk: int, index: int):
    try:
        task = selectors.task_get(campaign_id=pk, index=index)
    except SynthTask.DoesNotExist:
        raise Http404("No such task in this campaign.")
    context = {
        "task": task,
        "campaign": task.xcoder.campaign,
        "solutions": selectors.solutions(task),
        "matrix": selectors.vote_matrix(task),
    }
    return render(request, "xcoder/task_detail.html", context)
