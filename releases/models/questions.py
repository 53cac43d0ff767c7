"""Scoring a released question set: an answer model evaluated on a frozen release's questions.

A ``QuestionRun`` asks one answer model ``samples_per_question`` answers per released question
and has the chosen judges grade each one (against the reference answer where a curator
confirmed it); its summary is the mean score with a seeded bootstrap interval, broken down by
question type and by difficulty level. One ``QuestionSample`` per (run, question, sample), so a
redelivered task never duplicates a call.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from evolution.models.jobs import SupervisedJob


class QuestionRun(SupervisedJob):
    release = models.ForeignKey(
        "releases.Release", on_delete=models.PROTECT, related_name="question_runs"
    )
    endpoint = models.ForeignKey(
        "evolution.ModelEndpoint", on_delete=models.PROTECT, related_name="+"
    )
    judges = models.ManyToManyField("evolution.ModelEndpoint", related_name="+")
    label = models.CharField(max_length=200, help_text="the model's name on the leaderboard")
    samples_per_question = models.PositiveSmallIntegerField(default=1)
    bootstrap_seed = models.PositiveIntegerField(default=0)
    state = models.CharField(max_length=10, default="queued")  # RunState values
    error = models.TextField(blank=True)
    summary = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["release_id", "-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(samples_per_question__gte=1) & Q(samples_per_question__lte=20),
                name="questionrun_samples_range",
            ),
            models.CheckConstraint(
                condition=Q(state__in=["queued", "running", "completed", "failed"]),
                name="questionrun_state_valid",
            ),
        ]

    def __str__(self):
        return f"{self.label} on the questions of release {self.release_id}"


class QuestionSample(models.Model):
    """One answer and its grade: ``score`` None until judged; ``mode`` says whether the judges
    graded it alone ("judge") or against a curator-confirmed reference answer ("reference")."""

    run = models.ForeignKey(QuestionRun, on_delete=models.CASCADE, related_name="samples")
    question = models.ForeignKey(
        "releases.ReleaseQuestion", on_delete=models.PROTECT, related_name="+"
    )
    sample_index = models.PositiveSmallIntegerField()
    answer = models.TextField(blank=True)
    score = models.FloatField(null=True, blank=True)
    mode = models.CharField(max_length=10, blank=True)
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["run_id", "question_id", "sample_index"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "question", "sample_index"], name="questionsample_unique"
            ),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | (Q(score__gte=0) & Q(score__lte=1)),
                name="questionsample_score_range",
            ),
        ]

    def __str__(self):
        return f"{self.run_id}/{self.question_id}#{self.sample_index}: {self.score}"
