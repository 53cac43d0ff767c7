"""The living-benchmark page (public) and the curator's actions on it: put a model on the
evaluation panel or take one off (either re-measures the published release), re-measure now,
re-evolve the saturated problems of a release."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from benchapp.roles import ADMIN, CURATOR, has_role, role_required
from evolution.models import Campaign, ModelEndpoint

from . import blinding, calibration, living, living_plots
from .blinding import closed_while_rating_blind
from .models import Benchmark, Release, RemeasurementTrigger

CURATORS = (ADMIN, CURATOR)


@require_GET
@closed_while_rating_blind
def living_page(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    curator = any(has_role(request.user, role) for role in CURATORS)
    data = living.benchmark_living(benchmark=benchmark)
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

    def act():
        reevolution = living.reevolution_create(
            release=release, launch=request.POST.get("launch") == "1", by=request.user
        )
        return (
            f"Campaign {reevolution.campaign.name!r} created from "
            f"{len(reevolution.retired)} saturated problem(s)."
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
            "figure": living_plots.calibration_figure(calibration=cal),
            "disagreements": cal.disagreements,
            "route_url": route_url,
        },
    )


@role_required(*CURATORS)
@require_GET
def release_calibration(request, pk: int):
    release = get_object_or_404(Release, pk=pk)
    return _calibration_page(
        request,
        title=f"{release.benchmark.name} v{release.version}",
        back=reverse("releases:curate_detail", args=[release.pk]),
        cal=calibration.for_release(release=release),
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
