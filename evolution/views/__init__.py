from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from accounts.roles import ADMIN, CURATOR, role_required

from .. import selectors
from ..measurement import selectors as measurement_selectors
from ..measurement.forms import MeasureForm
from ..models import Campaign, ProblemSet
from ..pages import campaign_page, kind_campaign_list
from ..services import campaigns as campaign_services


@role_required(ADMIN, CURATOR)
def problem_list(request):
    problem_set = request.GET.get("set", "")
    problems = selectors.problem_list(problem_set=problem_set or None)
    page = Paginator(problems, 50).get_page(request.GET.get("page"))
    chosen = ProblemSet.objects.filter(name=problem_set).first() if problem_set else None
    measured = measurement_selectors.problem_difficulty([p.pk for p in page])
    return render(
        request,
        "evolution/problem_list.html",
        {
            "page": page,
            "rows": [(p, measured.get(p.pk)) for p in page],
            "problem_sets": selectors.problem_set_list(),
            "current_set": problem_set,
            "chosen_set": chosen,
            "measure_form": MeasureForm(),
            "batches": measurement_selectors.batch_list(problem_set=chosen)[:5] if chosen else [],
        },
    )


@role_required(ADMIN, CURATOR)
def problem_detail(request, public_id: str):
    problem = get_object_or_404(selectors.problem_list(), public_id=public_id)
    return render(
        request,
        "evolution/problem_detail.html",
        {
            "problem": problem,
            "tests": problem.tests.all()[:50],
            "test_count": problem.tests.count(),
            "measured": measurement_selectors.problem_difficulty([problem.pk]).get(problem.pk),
            "measurements": measurement_selectors.problem_measurements(problem)[:10],
            "measure_form": MeasureForm(),
        },
    )


# Every kind's list lists BenchEvolver's campaigns with the others.
campaign_list = kind_campaign_list("evolution", selectors.campaign_list_rows)


_ACTIONS = {
    "launch": campaign_services.campaign_launch,
    "pause": campaign_services.campaign_pause,
    "resume": campaign_services.campaign_resume,
    "cancel": campaign_services.campaign_cancel,
}


@role_required(ADMIN)
@require_POST
def campaign_control(request, pk: int, action: str, kind: str | None = None):
    """Launch / pause / resume / cancel a campaign of any kind from a POST, with a message, and
    go back to the campaign's page. The one control view: ``evolution:campaign_control`` serves
    every kind, and each kind's ``<kind>:campaign_control`` route (kept for the links in its
    pages) reaches it with ``kind`` set, so a campaign of another kind is a 404 there."""
    campaign = get_object_or_404(Campaign, pk=pk, **({"kind": kind} if kind else {}))
    service = _ACTIONS.get(action)
    if service is None:
        return HttpResponseNotAllowed(list(_ACTIONS))
    try:
        campaign = service(campaign_id=pk)
    except campaign_services.TransitionError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Campaign {campaign.name}: {campaign.state}.")
    return redirect(campaign_page(campaign))
