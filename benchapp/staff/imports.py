"""Seed imports from the admin page: the upload is stored with the job, a Celery worker runs
``evolution.importers.import_seeds`` on it (one transaction, as every import) and reports its
progress as it reads, then the counts (with what became of each reference the import refused,
replaced, dropped or did not use) or the line-numbered error."""

from __future__ import annotations

import gzip
import io
import logging
import tempfile
import threading
from pathlib import Path

from django.db import connections, transaction
from django.utils import timezone

from benchapp.models import SeedImportJob
from evolution import jobs
from evolution.importers import SeedImportError, import_seeds, reference_summary

log = logging.getLogger(__name__)

TASK = "benchapp.tasks.seed_import_run"
# Supervised with releases' jobs: a lost message is sent again, a killed worker's import (its
# transaction rolled back with it) is queued again, or failed after JOB_MAX_LOST_WORKERS. A
# failed import is never run again by a late message: its upload is gone.
SEED_IMPORT = jobs.Job(
    "seed import",
    SeedImportJob,
    TASK,
    retakes_failed=False,
    again="upload the file again once the cause is fixed",
)
PROGRESS_SECONDS = 0.5
EXCERPT_CHARS = 300


def _suffix(name: str) -> str:
    """The suffix the importers read the file by: Parquet, gzipped JSON lines or JSON lines."""
    lowered = name.lower()
    if lowered.endswith(".parquet"):
        return ".parquet"
    if lowered.endswith(".gz"):
        return ".jsonl.gz"
    return ".jsonl"


def _solutions_file_name(uploaded: str) -> str:
    """The uploaded solutions file's own name, when it can name a file here."""
    name = Path(uploaded).name
    if name in ("", ".", "..") or len(name.encode("utf-8")) > 200:
        return "solutions.jsonl"
    return name


def count_rows(content: bytes | None, file_name: str) -> int | None:
    """Lines (or Parquet rows) in the upload, for the progress bar; None when unknown."""
    if content is None:
        return None
    suffix = _suffix(file_name)
    if suffix == ".jsonl":
        return content.count(b"\n") + (0 if content.endswith(b"\n") or not content else 1)
    if suffix == ".parquet":
        try:
            import pyarrow.parquet as pq

            return pq.ParquetFile(io.BytesIO(content)).metadata.num_rows
        except Exception:  # not Parquet: the importer will say so, naming the file
            return None
    return None


def _enqueue(job_id: int) -> None:
    """Send the import's task; if the publish fails, the row stays queued and the job
    supervisor sends it again."""
    from celery import current_app

    current_app.signature(TASK, args=(job_id,)).apply_async(queue="default")
    jobs.note_sent(SeedImportJob, job_id)


def import_job_create(
    *,
    source: str,
    set_name: str = "",
    upload=None,
    solutions_upload=None,
    replace_references: bool = False,
    user=None,
) -> SeedImportJob:
    """Store the upload as a queued job and enqueue its import after commit."""
    content = upload.read() if upload is not None else None
    solutions = solutions_upload.read() if solutions_upload is not None else None
    file_name = upload.name if upload is not None else ""
    job = SeedImportJob.objects.create(
        source=source,
        set_name=set_name,
        file_name=file_name[:255],
        content=content,
        size_bytes=len(content or b""),
        solutions_name=(solutions_upload.name if solutions_upload is not None else "")[:255],
        solutions=solutions,
        replace_references=replace_references,
        lines_total=count_rows(content, file_name),
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    transaction.on_commit(lambda: _enqueue(job.pk))
    return job


class _ProgressWriter:
    """Records the line the import has reached from a thread of its own: the import holds its
    transaction open until the end, and this thread's connection commits each update at once."""

    def __init__(self, job_id: int):
        self.job_id = job_id
        self.line = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"import-{job_id}", daemon=True)

    def __call__(self, line: int) -> None:
        self.line = line

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        written = -1
        try:
            while not self._stop.wait(PROGRESS_SECONDS):
                line = self.line
                if line != written:
                    SeedImportJob.objects.filter(pk=self.job_id).update(
                        lines_read=line, updated_at=timezone.now()
                    )
                    written = line
        except Exception:  # progress is a courtesy: the import goes on without it
            log.exception("could not record the progress of import %s", self.job_id)
        finally:
            connections.close_all()


def _excerpt(content: bytes | None, file_name: str, line: int | None) -> str:
    if not content or not line or _suffix(file_name) == ".parquet":
        return ""
    if _suffix(file_name) == ".jsonl.gz":
        try:
            content = gzip.decompress(content)
        except Exception:
            return ""
    lines = content.split(b"\n", line)
    if len(lines) < line:
        return ""
    text = lines[line - 1].decode("utf-8", errors="replace").rstrip("\r")
    return text[:EXCERPT_CHARS] + ("…" if len(text) > EXCERPT_CHARS else "")


def import_job_run(job_id: int) -> str:
    """Run a queued import (the Celery task's body). The execution claims the row and
    heartbeats while it imports (``evolution.jobs``); a job another execution holds, or one
    finished, is left alone, so a redelivered message does nothing. Returns the job's state."""
    token = jobs.claim(SeedImportJob, job_id, retake_failed=False)
    if token is None:
        return SeedImportJob.objects.filter(pk=job_id).values_list("state", flat=True).first() or ""
    now = timezone.now()
    SeedImportJob.objects.filter(pk=job_id).update(started_at=now, updated_at=now, lines_read=0)
    with jobs.beating(SeedImportJob, job_id, token):
        outcome = _import(job_id)
    now = timezone.now()
    # The file is not kept once read: the problems are in the database, or the error says why.
    # Written only while this execution holds the row (the supervisor may have given it up).
    jobs.finish(
        SeedImportJob,
        job_id,
        token,
        content=None,
        solutions=None,
        finished_at=now,
        updated_at=now,
        **outcome,
    )
    return SeedImportJob.objects.filter(pk=job_id).values_list("state", flat=True).first() or ""


def _import(job_id: int) -> dict:
    """The import itself: the job's final fields (state, report or error)."""
    job = SeedImportJob.objects.get(pk=job_id)
    content = bytes(job.content) if job.content is not None else None
    solutions = bytes(job.solutions) if job.solutions is not None else None
    outcome: dict = {}
    with tempfile.TemporaryDirectory(prefix="benchforge-import-") as folder:
        path = solutions_path = None
        if content is not None:
            path = Path(folder) / f"upload{_suffix(job.file_name)}"
            path.write_bytes(content)
        if solutions is not None:
            # Named as uploaded (a reference's provenance names its solutions file), in a
            # folder of its own so that no name can meet the upload's.
            solutions_path = Path(folder) / "solutions"
            solutions_path.mkdir()
            solutions_path /= _solutions_file_name(job.solutions_name)
            solutions_path.write_bytes(solutions)
        try:
            with _ProgressWriter(job.pk) as progress:
                report = import_seeds(
                    source=job.source,
                    path=str(path) if path else None,
                    set_name=job.set_name or None,
                    solutions_path=str(solutions_path) if solutions_path else None,
                    replace_references=job.replace_references,
                    progress=progress,
                )
        except SeedImportError as exc:
            outcome = {
                "state": SeedImportJob.State.FAILED,
                "error": exc.message,
                "error_line": exc.line,
                "error_field": (exc.field or "")[:200],
                "error_excerpt": _excerpt(content, job.file_name, exc.line),
            }
        except Exception as exc:
            log.exception("import %s failed", job.pk)
            outcome = {
                "state": SeedImportJob.State.FAILED,
                "error": f"the import stopped on an internal error ({exc.__class__.__name__}); "
                "nothing was written",
            }
        else:
            outcome = {
                "state": SeedImportJob.State.DONE,
                "lines_read": job.lines_total or progress.line,
                "report": {
                    "problem_set": report.problem_set.name,
                    "problem_set_id": report.problem_set.pk,
                    "problems_in_set": report.problem_set.problems.count(),
                    "created": report.created,
                    "updated": report.updated,
                    "unchanged": report.unchanged,
                    "imported": report.total,
                    "with_reference": report.with_reference,
                    "skipped": report.skipped,
                    "skipped_reasons": [list(pair) for pair in report.skipped_reasons],
                    **reference_summary(report),
                },
            }
    return outcome
