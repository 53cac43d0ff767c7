"""The record of a panel measurement of one problem, its attempts, and a curator's batch.

A ``Measurement`` is one problem measured by one panel: its plan (K attempts per panel model,
fixed when it is created so a panel edited later does not change a measurement in flight), one
``MeasurementAttempt`` per (model, attempt), and once every attempt is judged the pooled result
(passes / attempts, infrastructure errors apart, the level phi maps the pass rate to, the
per-model table and the error pattern). It belongs to the campaign whose stage asked for it
(X-Coder and EvoSyn measure their kept problems) or to a ``MeasurementBatch`` a curator started
from a problem set's page; unique constraints make a rerun reuse the record, never duplicate it.
"""

from __future__ import annotations

from django.conf import settings as django_settings
from django.db import models
from django.db.models import Q


class MeasurementState(models.TextChoices):
    PENDING = "pending"  # attempts are being asked or judged
    COMPLETED = "completed"  # every attempt judged; the pooled result is stored
    FAILED = "failed"  # could not be measured (the reason says why)


class MeasurementBatch(models.Model):
    """A curator's "measure this problem set" (or these problems) with a panel."""

    problem_set = models.ForeignKey(
        "evolution.ProblemSet",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="measurement_batches",
    )
    panel = models.ForeignKey(
        "evolution.Panel", on_delete=models.PROTECT, related_name="measurement_batches"
    )
    target_eval_k = models.PositiveSmallIntegerField(default=4)
    label = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return self.label or f"measurement batch {self.pk}"


class Measurement(models.Model):
    problem = models.ForeignKey(
        "evolution.Problem", on_delete=models.CASCADE, related_name="measurements"
    )
    panel = models.ForeignKey(
        "evolution.Panel", on_delete=models.PROTECT, related_name="measurements"
    )
    campaign = models.ForeignKey(
        "evolution.Campaign",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="measurements",
        help_text="the campaign whose measurement stage asked for it",
    )
    batch = models.ForeignKey(
        MeasurementBatch,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="measurements",
    )
    # [[endpoint id, K], ...] in panel order, fixed at creation.
    plan = models.JSONField(default=list)
    level_thresholds = models.JSONField(default=list)
    state = models.CharField(
        max_length=10, choices=MeasurementState.choices, default=MeasurementState.PENDING
    )
    reason = models.CharField(max_length=500, blank=True)

    passes = models.PositiveIntegerField(null=True, blank=True)
    attempts = models.PositiveIntegerField(null=True, blank=True)
    infra_errors = models.PositiveIntegerField(default=0)
    level = models.PositiveSmallIntegerField(null=True, blank=True)
    # {"endpoint name": {"passes", "attempts", "verdicts", "infra_errors"?}}
    per_model = models.JSONField(default=dict, blank=True)
    error_pattern = models.JSONField(default=dict, blank=True)

    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    measured_at = models.DateTimeField(null=True, blank=True)
    # When its last step message was sent, and what the job supervisor did about a lost one
    # (``evolution.jobs``: a curator's measurement is a re-send-only supervised job).
    sent_at = models.DateTimeField(null=True, blank=True)
    recovery = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "problem"],
                condition=Q(campaign__isnull=False),
                name="measurement_once_per_campaign",
            ),
            models.UniqueConstraint(
                fields=["batch", "problem"],
                condition=Q(batch__isnull=False),
                name="measurement_once_per_batch",
            ),
            models.CheckConstraint(
                condition=Q(state__in=["pending", "completed", "failed"]),
                name="measurement_state_valid",
            ),
            models.CheckConstraint(
                condition=~Q(state="completed") | Q(attempts__isnull=False),
                name="measurement_completed_has_result",
            ),
        ]
        indexes = [models.Index(fields=["problem", "state"])]

    def __str__(self):
        return f"measurement {self.pk} of problem {self.problem_id} ({self.state})"

    @property
    def pass_rate(self) -> float | None:
        if not self.attempts:
            return None
        return (self.passes or 0) / self.attempts

    @property
    def planned(self) -> int:
        return sum(k for _, k in self.plan)


class MeasurementAttempt(models.Model):
    """One panel model's attempt at the problem: its code, then its verdict ("" until judged;
    "NC" no code; "IE" the model call failed for transport or provider reasons, asked again
    and never counted in a pass rate)."""

    measurement = models.ForeignKey(Measurement, on_delete=models.CASCADE, related_name="runs")
    endpoint = models.ForeignKey(
        "evolution.ModelEndpoint", on_delete=models.PROTECT, related_name="measurement_attempts"
    )
    attempt_index = models.PositiveIntegerField()
    code = models.TextField(blank=True)
    verdict = models.CharField(max_length=4, blank=True)
    passed_tests = models.PositiveIntegerField(default=0)
    total_tests = models.PositiveIntegerField(default=0)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["measurement_id", "endpoint_id", "attempt_index"]
        constraints = [
            models.UniqueConstraint(
                fields=["measurement", "endpoint", "attempt_index"],
                name="measurementattempt_unique",
            ),
        ]

    def __str__(self):
        return f"{self.endpoint_id} attempt {self.attempt_index}: {self.verdict or 'unjudged'}"
