"""Seed imports are supervised by the one job machinery (evolution.jobs, registered by benchapp): one
execution holds an import and heartbeats, a queued import whose message was lost is sent
again, and an import whose worker died (its transaction rolled back with it) is queued again
and then imports as a fresh one would, or is failed with the reason after
JOB_MAX_LOST_WORKERS. A failed import is never run again by a late message: its upload is
gone."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from benchapp.models import SeedImportJob
from benchapp.staff import imports
from evolution import jobs
from evolution.models import Problem
from releases import jobs as release_jobs

HUB = Path(__file__).resolve().parents[1] / "evolution" / "importers" / "data" / "hub"
TASK = "benchapp.tasks.seed_import_run"


@pytest.fixture
def sent(monkeypatch):
    """Task messages the supervisor publishes, recorded instead of sent."""
    out: list[tuple[str, int]] = []
    monkeypatch.setattr(jobs, "_send", lambda job, pk: out.append((job.task, pk)))
    return out


def _job() -> SeedImportJob:
    content = (HUB / "apps.jsonl").read_bytes()
    upload = SimpleUploadedFile("apps.jsonl", content, content_type="application/octet-stream")
    return imports.import_job_create(source="apps", upload=upload)


def _age(pk: int, **ago) -> None:
    now = timezone.now()
    SeedImportJob.objects.filter(pk=pk).update(
        **{name: now - timedelta(seconds=seconds) for name, seconds in ago.items()}
    )


def test_seed_imports_are_registered_with_the_job_supervisor():
    assert imports.SEED_IMPORT in jobs.supervised_jobs()
    assert imports.SEED_IMPORT not in release_jobs.JOBS  # releases' own list names no benchapp job


@pytest.mark.django_db
def test_a_queued_import_whose_message_was_lost_is_sent_again_once(settings, sent):
    settings.JOB_RESEND_SECONDS = 600
    lost, fresh = _job(), _job()
    _age(lost.pk, created_at=700)  # created, its publish lost
    _age(fresh.pk, created_at=10)
    report = jobs.supervise()
    assert sent == [(TASK, lost.pk)] and report.resent == [f"seed import {lost.pk}"]
    lost.refresh_from_db()
    assert lost.state == "queued" and lost.sent_at is not None
    assert "message re-sent" in lost.recovery and "never sent" in lost.recovery
    jobs.supervise()  # sent JOB_RESEND_SECONDS ago at the earliest: left alone
    assert sent == [(TASK, lost.pk)]


@pytest.mark.django_db(transaction=True)
def test_an_import_whose_worker_died_is_queued_again_and_then_imports(settings, sent, personas):
    settings.JOB_MAX_LOST_WORKERS = 2
    job = _job()
    # A worker takes it, then is killed: no heartbeat since, and nothing was imported.
    assert jobs.claim(SeedImportJob, job.pk, retake_failed=False)
    assert imports.import_job_run(job.pk) == "running"  # a second message: the row is held
    _age(job.pk, heartbeat_at=30)
    assert jobs.supervise().requeued == []  # its heartbeat is fresh: alive
    _age(job.pk, heartbeat_at=settings.JOB_LOST_SECONDS + 1)

    report = jobs.supervise()
    assert report.requeued == [f"seed import {job.pk}"] and sent == [(TASK, job.pk)]
    job.refresh_from_db()
    assert (job.state, job.lost_workers, job.claim) == ("queued", 1, "")
    assert "its worker stopped heartbeating" in job.recovery
    html = personas.admin.client.get(reverse("staff:import_detail", args=[job.pk])).content
    assert b"re-queued by the supervisor" in html

    # The message the supervisor sent runs it as a fresh import would.
    assert imports.import_job_run(job.pk) == "done"
    job.refresh_from_db()
    assert job.report["created"] == 2 and job.content is None and job.claim
    assert Problem.objects.filter(origin_dataset="apps").count() == 2


@pytest.mark.django_db
def test_an_import_that_keeps_losing_its_worker_fails_naming_why(settings, sent):
    settings.JOB_MAX_LOST_WORKERS = 1
    job = _job()
    assert jobs.claim(SeedImportJob, job.pk, retake_failed=False)
    _age(job.pk, heartbeat_at=settings.JOB_LOST_SECONDS + 1)
    assert jobs.supervise().failed == [f"seed import {job.pk}"]
    job.refresh_from_db()
    assert job.state == "failed" and "its worker stopped heartbeating" in job.error
    assert "upload the file again" in job.error
    # A late message for it does not run it again.
    assert imports.import_job_run(job.pk) == "failed"
    assert not Problem.objects.filter(origin_dataset="apps").exists()


@pytest.mark.django_db(transaction=True)
def test_a_slow_import_heartbeats_and_an_execution_that_lost_it_writes_nothing(
    settings, monkeypatch
):
    """The import heartbeats from a thread of its own while it reads; one the supervisor gave
    up on (its row taken by a successor) does not overwrite the successor's outcome."""
    settings.JOB_HEARTBEAT_SECONDS = 0.05
    job = _job()
    beats = []
    original = imports.import_seeds

    def slow(**kwargs):
        first = SeedImportJob.objects.values_list("heartbeat_at", flat=True).get(pk=job.pk)
        time.sleep(0.4)
        beats.append((first, SeedImportJob.objects.get(pk=job.pk).heartbeat_at))
        # Meanwhile the supervisor gave this execution up and a successor took the row.
        SeedImportJob.objects.filter(pk=job.pk).update(claim="successor")
        return original(**kwargs)

    monkeypatch.setattr(imports, "import_seeds", slow)
    state = imports.import_job_run(job.pk)
    assert beats and beats[0][1] > beats[0][0]  # heartbeats were written while it ran
    assert state == "running"  # its outcome did not land: the successor holds the row
    job.refresh_from_db()
    assert job.claim == "successor" and job.content is not None
