"""The gate's independent difficulty: an evaluation panel for a draft release, its evaluations
of the release candidates (fresh samples, judged on every test) and their samples.

The selection-time pass@1 of a candidate is the measurement that accepted it, so among many
candidates the ones kept are biased toward an unlucky panel (the winner's curse). An
independent evaluation measures the candidates again with fresh samples, optionally by models
that took no part in the selection; the gate reads that figure when it exists
(``releases.independent``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from evolution.models.jobs import SupervisedJob


class GatePanel(models.Model):
    """A draft's evaluation panel: which endpoints sample the candidates, how many fresh
    samples each, and whether models used for selection are left out."""

    release = models.OneToOneField(
        "releases.Release", on_delete=models.CASCADE, related_name="gate_panel"
    )
    endpoints = models.ManyToManyField("evolution.ModelEndpoint", related_name="+", blank=True)
    samples = models.PositiveSmallIntegerField(default=4, help_text="fresh samples per problem")
    # Off by default: the paper's evaluation suite includes the models used for selection (on
    # fresh samples, which is what removes the winner's curse). On leaves them out.
    exclude_selection_models = models.BooleanField(
        default=False,
        help_text="leave out models that measured the candidates during selection",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(samples__gte=1) & Q(samples__lte=100), name="gatepanel_samples_range"
            ),
        ]

    def __str__(self):
        return f"evaluation panel of release {self.release_id}"


class GateEvaluationState(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


class GateEvaluation(SupervisedJob):
    """One independent evaluation of a draft's candidates by its evaluation panel, as it was
    when the evaluation started (the panel used, the models left out and why, each candidate's
    content hash and selection-time figure)."""

    release = models.ForeignKey(
        "releases.Release", on_delete=models.CASCADE, related_name="gate_evaluations"
    )
    state = models.CharField(
        max_length=10, choices=GateEvaluationState.choices, default=GateEvaluationState.QUEUED
    )
    endpoints = models.ManyToManyField("evolution.ModelEndpoint", related_name="+", blank=True)
    samples = models.PositiveSmallIntegerField(default=4)
    exclude_selection_models = models.BooleanField(default=False)
    # [{"endpoint", "model", "why"}]: panel endpoints not used, with the reason.
    excluded = models.JSONField(default=list, blank=True)
    # {problem id (str): {"public_id", "title", "origin", "hash", "selection": {"passes",
    # "attempts"}}}: the candidates evaluated.
    problems = models.JSONField(default=dict, blank=True)
    planned = models.PositiveIntegerField(default=0, help_text="samples to draw in all")
    # Computed when the evaluation completes (releases.independent.evaluation_summary).
    summary = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta(SupervisedJob.Meta):
        ordering = ["release_id", "-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(samples__gte=1) & Q(samples__lte=100),
                name="gateevaluation_samples_range",
            ),
        ]

    def __str__(self):
        return f"independent evaluation {self.pk} of release {self.release_id}"

    @property
    def is_active(self) -> bool:
        return self.state in (GateEvaluationState.QUEUED, GateEvaluationState.RUNNING)


class GateEvaluationSample(models.Model):
    """One fresh sample of one panel model on one candidate; unique per (evaluation, endpoint,
    problem, index) so a redelivered task never duplicates work. Verdict "" until judged,
    "NC" for an answer without code, "IE" while the model call failed for transport or
    provider reasons (asked again, never counted in a pass rate)."""

    evaluation = models.ForeignKey(GateEvaluation, on_delete=models.CASCADE, related_name="rows")
    endpoint = models.ForeignKey(
        "evolution.ModelEndpoint", on_delete=models.PROTECT, related_name="+"
    )
    problem = models.ForeignKey("evolution.Problem", on_delete=models.PROTECT, related_name="+")
    sample_index = models.PositiveSmallIntegerField()
    code = models.TextField(blank=True)
    verdict = models.CharField(max_length=4, blank=True)
    passed_tests = models.PositiveIntegerField(default=0)
    total_tests = models.PositiveIntegerField(default=0)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["evaluation_id", "problem_id", "endpoint_id", "sample_index"]
        constraints = [
            models.UniqueConstraint(
                fields=["evaluation", "endpoint", "problem", "sample_index"],
                name="gateevaluationsample_unique",
            ),
        ]

    def __str__(self):
        return f"{self.evaluation_id}/{self.problem_id}/{self.endpoint_id}#{self.sample_index}"
