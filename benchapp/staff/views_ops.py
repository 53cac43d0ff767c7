"""The admin pages that watch background work: seed imports (upload, progress, counts or the
line-numbered error) and the workers page (workers, queues, recent step failures)."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render

from accounts.roles import ADMIN, role_required
from benchapp.models import SeedImportJob
from evolution import workers
from evolution.models import StepFailure
from evolution.streams.kinds import campaigns_without_worker

from .forms import SeedImportForm
from .imports import import_job_create

RECENT_FAILURES = 30


def _default_queue_workers() -> list[str]:
    return workers.workers_by_queue().get("default", [])


@role_required(ADMIN)
def import_new(request):
    form = SeedImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        job = import_job_create(
            source=data["source"],
            set_name=data.get("set_name") or "",
            upload=data.get("file"),
            solutions_upload=data.get("solutions"),
            replace_references=bool(data.get("replace_references")),
            user=request.user,
        )
        messages.success(request, f"{job.file_name or job.source} uploaded as import {job.pk}.")
        return redirect("staff:import_detail", pk=job.pk)
    return render(
        request,
        "benchapp/staff/import_new.html",
        {
            "form": form,
            "jobs": SeedImportJob.objects.defer("content", "solutions")[:20],
            "default_workers": _default_queue_workers(),
        },
    )


@role_required(ADMIN)
def import_detail(request, pk: int):
    job = get_object_or_404(SeedImportJob.objects.defer("content", "solutions"), pk=pk)
    context = {
        "job": job,
        # Only a waiting job needs to know whether anyone will run it.
        "default_workers": _default_queue_workers() if job.state == job.State.QUEUED else None,
    }
    if request.htmx:
        return render(request, "benchapp/staff/_import_status.html", context)
    return render(request, "benchapp/staff/import_detail.html", context)


@role_required(ADMIN)
def worker_overview(request):
    """Workers, queues and recent step failures; the page re-reads its body every 5 s."""
    refresh = request.GET.get("refresh") == "1"
    overview = workers.overview(refresh=refresh)
    live_by_queue = {
        queue["name"]: queue["workers"] for queue in overview["queues"] if overview["broker_ok"]
    }
    context = {
        "overview": overview,
        "waiting": campaigns_without_worker(live_by_queue),
        "failures": StepFailure.objects.select_related("campaign")[:RECENT_FAILURES],
    }
    if request.htmx:
        return render(request, "benchapp/staff/_workers_body.html", context)
    return render(request, "benchapp/staff/workers.html", context)
