"""The living-benchmark page (public) and the curator's actions on it: put a model on the
evaluation panel (re-measures the published release), re-measure now, re-evolve the saturated
problems of a release."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from benchapp.roles import ADMIN, CURATOR, has_role, role_required
from evolution.models import ModelEndpoint

from . import living
from .models import Benchmark, Release, RemeasurementTrigger

CURATORS = (ADMIN, CURATOR)


@require_GET
def living_page(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    curator = any(has_role(request.user, role) for role in CURATORS)
    return render(
        request,
        "releases/living.html",
        {
            "benchmark": benchmark,
            "curator": curator,
            "endpoints": ModelEndpoint.objects.order_by("name") if curator else [],
            "schedule_hours": settings.LIVING_REMEASURE_HOURS,
            **living.benchmark_living(benchmark=benchmark),
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
