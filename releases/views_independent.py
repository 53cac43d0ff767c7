"""The curator's independent evaluation of a draft's candidates: the evaluation panel form,
the "run" action, the progress fragment the release page polls, and the gap table as CSV."""

from __future__ import annotations

import csv
import io

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from accounts.roles import ADMIN, CURATOR, role_required
from evolution.models import ModelEndpoint

from . import independent, services
from .models import GateEvaluation, Release

CURATORS = (ADMIN, CURATOR)


def _act(request, pk: int, action):
    release = get_object_or_404(Release, pk=pk)
    try:
        note = action(release)
        messages.success(request, note)
    except ValidationError as exc:
        for message in exc.messages:
            messages.error(request, message)
    return redirect(f"{_detail_url(release)}#independent")


def _detail_url(release: Release) -> str:
    from django.urls import reverse

    return reverse("releases:curate_detail", args=[release.pk])


@role_required(*CURATORS)
@require_POST
def panel_save(request, pk: int):
    def act(release):
        ids = [v for v in request.POST.getlist("endpoints") if v.isdigit()]
        try:
            samples = int(request.POST.get("samples") or 4)
        except ValueError:
            raise ValidationError("Fresh samples per problem must be a whole number.")
        independent.panel_update(
            release=release,
            endpoints=ModelEndpoint.objects.filter(pk__in=ids),
            samples=samples,
            exclude_selection_models=request.POST.get("exclude_selection_models") == "1",
        )
        return "Evaluation panel saved."

    return _act(request, pk, act)


@role_required(*CURATORS)
@require_POST
def evaluate(request, pk: int):
    def act(release):
        evaluation = services.gate_evaluation_start(release=release, by=request.user)
        return (
            f"Independent evaluation {evaluation.pk} queued: {evaluation.planned} fresh samples "
            f"({len(evaluation.problems)} candidates × {evaluation.endpoints.count()} model(s) × "
            f"{evaluation.samples})."
        )

    return _act(request, pk, act)


@role_required(*CURATORS)
@require_GET
def fragment(request, pk: int):
    """The independent-evaluation section alone (the release page polls it while a run is
    under way)."""
    release = get_object_or_404(Release.objects.select_related("benchmark"), pk=pk)
    return render(
        request,
        "releases/_independent.html",
        {
            "release": release,
            "independent": independent.release_context(release=release),
            "endpoints": ModelEndpoint.objects.order_by("name"),
        },
    )


@role_required(*CURATORS)
@require_GET
def gap_csv(request, pk: int):
    evaluation = get_object_or_404(GateEvaluation, pk=pk)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        [
            "public_id",
            "origin",
            "selection_passes",
            "selection_attempts",
            "selection_pass_at_1",
            "independent_passes",
            "independent_attempts",
            "independent_pass_at_1",
            "independent_low",
            "independent_high",
            "infra_errors",
            "gap",
        ]
    )
    for row in evaluation.summary.get("per_problem", []):
        sel, ind = row["selection"], row["independent"]
        writer.writerow(
            [
                row["public_id"],
                row["origin"],
                sel["passes"],
                sel["attempts"],
                sel["pass_at_1"],
                ind["passes"],
                ind["attempts"],
                ind["pass_at_1"],
                ind["low"],
                ind["high"],
                ind["infra_errors"],
                row["gap"],
            ]
        )
    response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = (
        f'attachment; filename="independent-evaluation-{evaluation.pk}-gap.csv"'
    )
    return response
