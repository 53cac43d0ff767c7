from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_POST

from accounts.roles import ADMIN, CURATOR, has_role, role_required

from . import selectors
from .benchevolver import services as benchevolver_services
from .benchevolver.forms import BenchEvolverCampaignForm
from .measurement import selectors as measurement_selectors
from .measurement.forms import MeasureForm
from .models import Campaign, ProblemSet
from .models.campaigns import CampaignKind
from .services import campaigns as campaign_services


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


def campaign_new_response(request, *, form, template: str, create):
    """The creation page of every kind. On a valid POST the kind's create service ``create``
    makes the campaign from the form (``form.create_kwargs()``, by the requesting user) and,
    when the form asks (its ``launch`` box), it is launched in the same transaction: a launch
    that fails leaves no draft behind. Errors go on the fields they name."""
    if request.method == "POST" and form.is_valid():
        launch = bool(form.cleaned_data.get("launch"))
        try:
            with transaction.atomic():
                campaign = create(**form.create_kwargs(), created_by=request.user)
                if launch:
                    campaign = campaign_services.campaign_launch(campaign_id=campaign.pk)
        except ValidationError as exc:
            form.add_settings_errors(exc)
        else:
            done = " and launched." if launch else ". Launch it when ready."
            messages.success(request, f"Campaign {campaign.name} created{done}")
            return redirect(campaign_page(campaign))
    return render(request, template, {"form": form})


def _campaign_context(campaign: Campaign) -> dict:
    return {
        "campaign": campaign,
        "progress": selectors.campaign_progress(campaign),
        "lineages": selectors.lineage_list(campaign),
    }


@role_required(ADMIN, CURATOR)
def campaign_detail(request, pk: int):
    campaign = get_object_or_404(selectors.campaign_list(), pk=pk)
    if campaign.kind != CampaignKind.BENCHEVOLVER:
        # Other kinds have their own page (their app's "<kind>:campaign_detail").
        try:
            return redirect(reverse(f"{campaign.kind}:campaign_detail", args=[pk]))
        except NoReverseMatch:
            raise Http404(f"no page for campaigns of kind {campaign.kind}")
    context = _campaign_context(campaign)
    context["settings_table"] = selectors.campaign_settings_table(campaign)
    context["endpoint_table"] = selectors.campaign_endpoint_table(campaign)
    context["can_control"] = has_role(request.user, ADMIN)
    return render_campaign_page(
        request,
        "evolution/campaign_detail.html",
        context,
        live_body="evolution/_live_benchevolver.html",
    )


def kind_campaign_list(app: str, campaigns):
    """The campaign list page of a kind: ``<app>/campaign_list.html`` with ``campaigns()``."""

    @role_required(ADMIN, CURATOR)
    def campaign_list(request):
        return render(request, f"{app}/campaign_list.html", {"campaigns": campaigns()})

    return campaign_list


def kind_campaign_new(app: str, form_class, create):
    """The creation page of a kind: ``<app>/campaign_new.html`` with its form, made by the
    kind's create service ``create`` (``campaign_new_response``)."""

    @role_required(ADMIN)
    def campaign_new(request):
        return campaign_new_response(
            request,
            form=form_class(request.POST or None),
            template=f"{app}/campaign_new.html",
            create=create,
        )

    return campaign_new


def kind_campaign_or_404(get, pk: int, does_not_exist, label: str):
    """A kind's campaign row (``get(campaign_id=pk)``), or 404 "No <label> campaign with this
    id."."""
    try:
        return get(campaign_id=pk)
    except does_not_exist:
        raise Http404(f"No {label} campaign with this id.") from None


# Every kind's list lists BenchEvolver's campaigns with the others; its creation page makes
# BenchEvolver campaigns.
campaign_list = kind_campaign_list("evolution", selectors.campaign_list_rows)
campaign_new = kind_campaign_new(
    "evolution", BenchEvolverCampaignForm, benchevolver_services.campaign_create
)


def kept_measurement(campaign: Campaign, settings_class, kept) -> dict:
    """The campaign page's panel measurement of the problems a kind kept (``kept``), when its
    settings ask for it (``measure_kept``)."""
    return measurement_selectors.campaign_context(
        campaign,
        enabled=settings_class.from_dict(campaign.settings).measure_kept,
        kept_count=kept.count(),
    )


def render_campaign_page(request, template: str, context: dict, *, live_body: str):
    """A campaign page of any kind; its live-progress poll (an htmx request) gets the shared
    live section (``evolution/_live.html``) filled by the kind's ``live_body`` alone."""
    if request.htmx:
        return render(request, "evolution/_live.html", {**context, "live_body": live_body})
    return render(request, template, context)


_ACTIONS = {
    "launch": campaign_services.campaign_launch,
    "pause": campaign_services.campaign_pause,
    "resume": campaign_services.campaign_resume,
    "cancel": campaign_services.campaign_cancel,
}


def campaign_page(campaign: Campaign) -> str:
    """The URL of a campaign's page: BenchEvolver's here, every other kind's in its own app
    (``<kind>:campaign_detail``)."""
    if campaign.kind == CampaignKind.BENCHEVOLVER:
        return reverse("evolution:campaign_detail", args=[campaign.pk])
    return reverse(f"{campaign.kind}:campaign_detail", args=[campaign.pk])


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
