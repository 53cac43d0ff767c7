"""The living-benchmark page (public) and the curator's actions on it: put a model on the
evaluation panel or take one off (either re-measures the published release), re-measure now,
re-evolve the saturated problems of a release, then review that draft, adjust its problems,
name and budget, and launch or discard it."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from accounts.roles import ADMIN, CURATOR, has_role, role_required
from evolution.models import Campaign, ModelEndpoint

from .. import blinding, calibration, living
from ..blinding import closed_while_rating_blind
from ..models import Benchmark, ReEvolution, Release, RemeasurementTrigger
from . import plots

CURATORS = (ADMIN, CURATOR)


@require_GET
@closed_while_rating_blind
def living_page(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    curator = any(has_role(request.user, role) for role in CURATORS)
    data = living.benchmark_living(benchmark=benchmark)
    if curator:
        # A drafted re-evolution is reviewed, adjusted and launched here by a curator.
        for reevolution in data["pending"]:
            reevolution.draft = living.reevolution_draft(reevolution=reevolution)
    return render(
        request,
        "releases/living.html",
        {
            "benchmark": benchmark,
            "curator": curator,
            "endpoints": ModelEndpoint.objects.order_by("name") if curator else [],
            "schedule_hours": settings.LIVING_REMEASURE_HOURS,
            # Curators see every flag; the public page leaves out those of problems under
            # blind review (a saturation flag is a measured difficulty).
            **(data if curator else blinding.withhold_living(data)),
        },
    )


def _act(request, slug: str, action):
    try:
        with transaction.atomic():
            note = action()
        messages.success(request, note)
    except ValidationError as exc:
        for message in exc.messages:
            messages.error(request, message)
    return redirect("releases:living", slug=slug)


@role_required(*CURATORS)
@require_POST
def living_panel_add(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)

    def act():
        endpoint = ModelEndpoint.objects.filter(pk=request.POST.get("endpoint") or 0).first()
        if endpoint is None:
            raise ValidationError({"endpoint": "Choose a model endpoint."})
        try:
            samples = int(request.POST.get("samples") or 4)
        except ValueError:
            raise ValidationError({"samples": "Samples per problem must be a whole number."})
        living.panel_seat_add(
            benchmark=benchmark, endpoint=endpoint, samples=samples, by=request.user
        )
        return f"{endpoint.name} joined the panel; the re-measurement is queued."

    return _act(request, slug, act)


@role_required(*CURATORS)
@require_POST
def living_panel_remove(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)

    def act():
        endpoint = ModelEndpoint.objects.filter(pk=request.POST.get("endpoint") or 0).first()
        if endpoint is None:
            raise ValidationError({"endpoint": "Choose a model endpoint."})
        remeasurement = living.panel_seat_remove(
            benchmark=benchmark, endpoint=endpoint, by=request.user
        )
        if remeasurement is None:
            return f"{endpoint.name} left the panel; no model is left to re-measure with."
        return f"{endpoint.name} left the panel; the re-measurement is queued."

    return _act(request, slug, act)


@role_required(*CURATORS)
@require_POST
def living_remeasure(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)

    def act():
        living.remeasurement_start(
            benchmark=benchmark,
            trigger=RemeasurementTrigger.MANUAL,
            reason="requested by a curator",
            by=request.user,
        )
        return "Re-measurement queued."

    return _act(request, slug, act)


@role_required(*CURATORS)
@require_POST
def living_reevolve(request, slug: str, pk: int):
    release = get_object_or_404(Release, pk=pk, benchmark__slug=slug)

    launch = request.POST.get("launch") == "1"

    def act():
        reevolution = living.reevolution_create(release=release, launch=launch, by=request.user)
        return (
            f"Campaign {reevolution.campaign.name!r} created from "
            f"{len(reevolution.retired)} saturated problem(s)"
            + (" and launched." if launch else "; check it below and launch it.")
        )

    return _act(request, slug, act)


def _whole(request, field: str, label: str) -> int | None:
    """A budget field of the re-evolution form: empty is no limit."""
    text = (request.POST.get(field) or "").strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ValidationError({field: f"{label} must be a whole number or empty (no limit)."})


def _cost(request) -> Decimal | None:
    text = (request.POST.get("budget_max_cost") or "").strip()
    if not text:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValidationError({"budget_max_cost": "The cost limit must be a number or empty."})
    if not value.is_finite():
        raise ValidationError({"budget_max_cost": "The cost limit must be a number or empty."})
    return value


@role_required(*CURATORS)
@require_POST
def living_reevolution_edit(request, slug: str, pk: int):
    """A curator's changes to a drafted re-evolution (its problems, name and budget), saved,
    and with ``action=launch`` its campaign launched in the same transaction. Curators launch
    re-evolution drafts only; any other campaign is launched by an admin."""
    reevolution = get_object_or_404(
        ReEvolution.objects.select_related("campaign", "release"),
        pk=pk,
        release__benchmark__slug=slug,
    )
    launch = request.POST.get("action") == "launch"

    def act():
        living.reevolution_update(
            reevolution=reevolution,
            keep=request.POST.getlist("retired"),
            name=request.POST.get("name"),
            budget_max_calls=_whole(request, "budget_max_calls", "The call limit"),
            budget_max_tokens=_whole(request, "budget_max_tokens", "The token limit"),
            budget_max_cost=_cost(request),
        )
        if launch:
            campaign = living.reevolution_launch(reevolution=reevolution)
            return f"Campaign {campaign.name!r} launched."
        reevolution.campaign.refresh_from_db()
        return f"Campaign {reevolution.campaign.name!r} saved; still a draft."

    return _act(request, slug, act)


@role_required(*CURATORS)
@require_POST
def living_reevolution_discard(request, slug: str, pk: int):
    reevolution = get_object_or_404(ReEvolution, pk=pk, release__benchmark__slug=slug)

    def act():
        campaign = living.reevolution_discard(reevolution=reevolution, by=request.user)
        return (
            f"Campaign {campaign.name!r} discarded; its {len(reevolution.retired)} problem(s) "
            "can be re-evolved again."
        )

    return _act(request, slug, act)


def _calibration_page(request, *, title: str, back: str, cal, route_url: str):
    return render(
        request,
        "releases/living_calibration.html",
        {
            "title": title,
            "back": back,
            "cal": cal,
            "plot": cal.plot(),
            "figure": plots.calibration_figure(calibration=cal),
            "disagreements": cal.disagreements,
            "route_url": route_url,
        },
    )


@role_required(*CURATORS)
@require_GET
def release_calibration(request, pk: int):
    release = get_object_or_404(Release, pk=pk)
    cal = calibration.for_release(release=release)
    # Each row's level is that of its latest measurement, the one its pass@1 comes from.
    living.calibration_levels(calibration=cal, release=release)
    return _calibration_page(
        request,
        title=f"{release.benchmark.name} v{release.version}",
        back=reverse("releases:curate_detail", args=[release.pk]),
        cal=cal,
        route_url=reverse("releases:release_calibration_route", args=[release.pk]),
    )


@role_required(*CURATORS)
@require_GET
def campaign_calibration(request, pk: int):
    campaign = get_object_or_404(Campaign, pk=pk)
    return _calibration_page(
        request,
        title=f"campaign {campaign.name}",
        back=reverse("evolution:campaign_detail", args=[campaign.pk]),
        cal=calibration.for_campaign(campaign=campaign),
        route_url=reverse("releases:campaign_calibration_route", args=[campaign.pk]),
    )


def _route(request, cal, back: str):
    opened = calibration.disagreements_route(calibration=cal)
    messages.success(request, f"{len(opened)} disagreement(s) sent to the adjudication queue.")
    return redirect(back)


@role_required(*CURATORS)
@require_POST
def release_calibration_route(request, pk: int):
    release = get_object_or_404(Release, pk=pk)
    return _route(
        request,
        calibration.for_release(release=release),
        reverse("releases:release_calibration", args=[release.pk]),
    )


@role_required(*CURATORS)
@require_POST
def campaign_calibration_route(request, pk: int):
    campaign = get_object_or_404(Campaign, pk=pk)
    return _route(
        request,
        calibration.for_campaign(campaign=campaign),
        reverse("releases:living_calibration_campaign", args=[campaign.pk]),
    )
