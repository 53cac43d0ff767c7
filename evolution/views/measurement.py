"""Pages of the shared panel measurement: measure a problem set or one problem, follow a batch.

Thin: a form, one service call, a redirect; the Celery tasks do the work."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from accounts.roles import ADMIN, CURATOR, role_required

from ..measurement import selectors, services
from ..measurement.forms import MeasureForm
from ..measurement.models import Measurement
from ..models import Problem, ProblemSet


def _errors(exc: ValidationError) -> str:
    return "; ".join(exc.messages)


def _set_page(problem_set: ProblemSet) -> str:
    return f"{reverse('evolution:problem_list')}?{urlencode({'set': problem_set.name})}"


@role_required(ADMIN, CURATOR)
@require_POST
def measure_set(request, pk: int):
    """Measure every problem of a set with a panel (one measurement per problem, queued)."""
    problem_set = get_object_or_404(ProblemSet, pk=pk)
    form = MeasureForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a panel and K between 1 and 64.")
        return redirect(_set_page(problem_set))
    try:
        batch = services.batch_create(
            panel=form.cleaned_data["panel"],
            problem_set=problem_set,
            k=form.cleaned_data["target_eval_k"],
            created_by=request.user,
        )
    except ValidationError as exc:
        messages.error(request, _errors(exc))
        return redirect(_set_page(problem_set))
    messages.success(request, f"Measuring {batch.measurements.count()} problem(s).")
    return redirect("evolution:measurement_batch", pk=batch.pk)


@role_required(ADMIN, CURATOR)
@require_POST
def measure_problem(request, public_id: str):
    problem = get_object_or_404(Problem, public_id=public_id)
    form = MeasureForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a panel and K between 1 and 64.")
        return redirect("evolution:problem_detail", public_id=public_id)
    try:
        batch = services.batch_create(
            panel=form.cleaned_data["panel"],
            problems=[problem],
            k=form.cleaned_data["target_eval_k"],
            created_by=request.user,
            label=f"{problem.title} by {form.cleaned_data['panel'].name}",
        )
    except ValidationError as exc:
        messages.error(request, _errors(exc))
        return redirect("evolution:problem_detail", public_id=public_id)
    return redirect("evolution:measurement_batch", pk=batch.pk)


@role_required(ADMIN, CURATOR)
@require_GET
def measurement_batch(request, pk: int):
    batch = get_object_or_404(selectors.batch_list(), pk=pk)
    progress = services.batch_progress(batch)
    return render(
        request,
        "evolution/measurement_batch.html",
        {
            "batch": batch,
            "measurements": selectors.batch_measurements(batch),
            "progress": progress,
            "running": progress["pending"] > 0,
        },
    )


@role_required(ADMIN, CURATOR)
@require_POST
def measurement_retry(request, pk: int):
    measurement = get_object_or_404(Measurement, pk=pk)
    try:
        services.measurement_retry(measurement=measurement)
    except ValidationError as exc:
        messages.error(request, _errors(exc))
    if measurement.batch_id:
        return redirect("evolution:measurement_batch", pk=measurement.batch_id)
    return redirect("evolution:problem_detail", public_id=measurement.problem.public_id)
