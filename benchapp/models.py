from django.conf import settings
from django.db import models

from evolution.models.jobs import SupervisedJob


class SeedImportJob(SupervisedJob):
    """A seed file uploaded on the import page, imported by a Celery worker.

    The file travels in the row (web and workers may run on different machines) and is
    dropped once the import has run; progress is written while the import's own transaction
    is still open, so the page can show it. Supervised by the one job machinery (``evolution.jobs``,
    registered in ``BenchappConfig.ready``): one execution holds it and heartbeats, a lost
    message is sent again, a killed worker's import is queued again (its transaction died
    with it, so nothing was written) or failed with the reason."""

    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    source = models.CharField(max_length=20)
    set_name = models.CharField(max_length=200, blank=True)
    file_name = models.CharField(max_length=255, blank=True)
    content = models.BinaryField(null=True, blank=True)
    solutions_name = models.CharField(max_length=255, blank=True)
    solutions = models.BinaryField(null=True, blank=True)
    # The import's references replace the problems' own (import_seeds(replace_references=...)).
    replace_references = models.BooleanField(default=False)
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    size_bytes = models.PositiveBigIntegerField(default=0)
    lines_total = models.PositiveIntegerField(null=True, blank=True)
    lines_read = models.PositiveIntegerField(default=0)
    # created / updated / unchanged / with_reference / skipped / skipped_reasons /
    # problem_set / problems_in_set / references_* / references, as import_seeds reports them.
    report = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    error_line = models.PositiveIntegerField(null=True, blank=True)
    error_field = models.CharField(max_length=200, blank=True)
    # The start of the refused line, when the upload is text: what the admin has to fix.
    error_excerpt = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(state__in=["queued", "running", "done", "failed"]),
                name="seedimportjob_state_valid",
            )
        ]

    def __str__(self):
        return f"import {self.pk}: {self.source} {self.file_name or '(packaged)'} ({self.state})"

    @property
    def is_finished(self) -> bool:
        return self.state in (self.State.DONE, self.State.FAILED)

    @property
    def percent(self) -> float:
        if self.state == self.State.DONE:
            return 100.0
        if not self.lines_total:
            return 0.0
        return round(min(100.0, 100.0 * self.lines_read / self.lines_total), 1)
