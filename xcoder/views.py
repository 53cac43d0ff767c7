"""Pages of X-Coder campaigns: list, creation, the campaign page (feature counts before and
after evolution, the browsable tree, tasks with their reasons) and the task page (subtree,
strategy, gates, tests, candidates and the vote matrix). Admins and curators only."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import render

from accounts.roles import ADMIN, CURATOR, has_role, role_required
from evolution import pages
from evolution.measurement import selectors as measurement_selectors

from . import selectors, services
from .config import XcoderSettings
from .engine import difficulty
from .forms import XcoderCampaignForm
from .kind import kept_problems
from .models import SynthTask, XcoderCampaign


def _get(pk: int) -> XcoderCampaign:
    return pages.kind_campaign_or_404(
        selectors.xcoder_get, pk, XcoderCampaign.DoesNotExist, "X-Coder"
    )


campaign_list = pages.kind_campaign_list("xcoder", selectors.campaign_list)
campaign_new = pages.kind_campaign_new(
    "xcoder", XcoderCampaignForm, services.xcoder_campaign_create
)


@role_required(ADMIN, CURATOR)
def campaign_detail(request, pk: int):
    xc = _get(pk)
    context = {
        "xc": xc,
        "campaign": xc.campaign,
        "settings_rows": XcoderSettings.table(xc.campaign.settings),
        "solvers": list(xc.solver_endpoints.order_by("name")),
        "counts": selectors.count_rows(xc),
        "tree": selectors.feature_tree(xc),
        "tasks": selectors.task_list(xc),
        "status_counts": selectors.status_counts(xc),
        "reasons": selectors.discard_reasons(xc),
        "diversity": selectors.diversity_map(xc),
        "difficulty": selectors.difficulty_agreement(xc),
        "difficulty_on": XcoderSettings.from_dict(xc.campaign.settings).difficulty_estimate,
        "can_control": has_role(request.user, ADMIN),
        "measurement": measurement_selectors.kept_measurement(
            xc.campaign, XcoderSettings, kept_problems(xc.campaign)
        ),
    }
    return pages.render_campaign_page(
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
        "difficulty_method": difficulty.METHOD_LABEL,
        "difficulty_replayed": selectors.difficulty_replayed(task),
    }
    return render(request, "xcoder/task_detail.html", context)
