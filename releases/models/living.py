"""A living benchmark: the evaluation panel of a benchmark, its re-measurements over time,
each problem's dated difficulty history and the saturation flags they raise.

None of these rows belong to a release's frozen snapshot: they describe how the world's models
fare on a published release as the panel changes, so they may be written after publishing.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from evolution.models.jobs import SupervisedJob


class PanelSeat(models.Model):
    """A model on a benchmark's evaluation panel. Adding one re-measures the published release."""

    benchmark = models.ForeignKey(
        "releases.Benchmark", on_delete=models.CASCADE, related_name="panel_seats"
    )
    endpoint = models.ForeignKey(
        "evolution.ModelEndpoint", on_delete=models.PROTECT, related_name="+"
    )
    samples = models.PositiveSmallIntegerField(default=4, help_text="samples per problem")
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["benchmark_id", "added_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "endpoint"], name="panelseat_unique"),
            models.CheckConstraint(
                condition=Q(samples__gte=1) & Q(samples__lte=100), name="panelseat_samples_range"
            ),
        ]

    def __str__(self):
        return f"{self.endpoint} on {self.benchmark}"


class RemeasurementTrigger(models.TextChoices):
    PANEL_CHANGE = "panel_change", "the panel changed"
    SCHEDULE = "schedule", "scheduled"
    MANUAL = "manual", "requested by a curator"


class Remeasurement(SupervisedJob):
    """The current panel evaluated on a published release (one leaderboard run per panel
    model, reusing completed ones), then each problem's pooled pass@1 recorded."""

    benchmark = models.ForeignKey(
        "releases.Benchmark", on_delete=models.CASCADE, related_name="remeasurements"
    )
    release = models.ForeignKey(
        "releases.Release", on_delete=models.PROTECT, related_name="remeasurements"
    )
    trigger = models.CharField(max_length=20, choices=RemeasurementTrigger.choices)
    reason = models.CharField(max_length=300, blank=True)
    state = models.CharField(max_length=10, default="queued")  # releases.models.RunState values
    runs = models.ManyToManyField("releases.LeaderboardRun", related_name="+", blank=True)
    # {"bound", "problems", "saturated", "newly_saturated": [public ids], "models": [labels]}
    summary = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta(SupervisedJob.Meta):
        ordering = ["benchmark_id", "-created_at", "-id"]

    def __str__(self):
        return f"re-measurement {self.pk} of release {self.release_id}"


class DifficultyPoint(models.Model):
    """One problem's pass@1 over the panel as one re-measurement found it.

    An open-ended (scored) problem has no pass@1: its point holds the panel's mean verifier
    score over its answers (``mean_score``, 0 to 1; ``samples`` counts the answers) and no
    pass@1, interval or pass count."""

    remeasurement = models.ForeignKey(
        Remeasurement, on_delete=models.CASCADE, related_name="points"
    )
    release = models.ForeignKey("releases.Release", on_delete=models.CASCADE, related_name="+")
    public_id = models.CharField(max_length=24)
    measured_at = models.DateTimeField()
    # A pass/fail problem: pass@1 with its 95% Wilson interval and passes of ``samples``.
    pass_at_1 = models.FloatField(null=True, blank=True)
    low = models.FloatField(null=True, blank=True)
    high = models.FloatField(null=True, blank=True)
    samples = models.PositiveIntegerField()
    passes = models.PositiveIntegerField(null=True, blank=True)
    # An open-ended (scored) problem: the mean verifier score of the panel's ``samples``.
    mean_score = models.FloatField(null=True, blank=True)
    # [{"label", "n", "c", "pass_at_1"}] per panel model; [{"label", "n", "score"}] when scored
    models_detail = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["release_id", "public_id", "measured_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["remeasurement", "public_id"], name="difficultypoint_unique"
            ),
            models.CheckConstraint(
                condition=(
                    Q(
                        mean_score__isnull=True,
                        pass_at_1__isnull=False,
                        low__isnull=False,
                        high__isnull=False,
                        passes__isnull=False,
                    )
                    | Q(
                        mean_score__isnull=False,
                        pass_at_1__isnull=True,
                        low__isnull=True,
                        high__isnull=True,
                        passes__isnull=True,
                    )
                ),
                name="difficultypoint_pass_rate_or_score",
            ),
        ]

    def __str__(self):
        figure = (
            f"mean score {self.mean_score:.3f}"
            if self.scored
            else f"pass@1 {(self.pass_at_1 or 0):.3f}"
        )
        return f"{self.public_id} {figure} at {self.measured_at:%Y-%m-%d}"

    @property
    def scored(self) -> bool:
        """An open-ended problem's point: a mean score, no pass@1."""
        return self.mean_score is not None


class SaturationFlagQuerySet(models.QuerySet):
    def active(self):
        return self.filter(withdrawn_at__isnull=True)

    def withdrawn(self):
        return self.filter(withdrawn_at__isnull=False)


class SaturationFlag(models.Model):
    """A problem whose pass@1 over the panel rose above the gate's upper bound: when, how
    high, and the panel models that solve it more often than the bound.

    A later re-measurement that finds the pooled pass@1 at or below the bound AND no panel
    model above it on its own withdraws the flag (date, pass@1, reason, the re-measurement);
    the row stays as history, and a problem saturated again gets a new flag. At most one flag
    per problem and release is active."""

    release = models.ForeignKey(
        "releases.Release", on_delete=models.CASCADE, related_name="saturation_flags"
    )
    public_id = models.CharField(max_length=24)
    flagged_at = models.DateTimeField()
    pass_at_1 = models.FloatField()
    bound = models.FloatField()
    saturating_models = models.JSONField(default=list, blank=True)
    remeasurement = models.ForeignKey(Remeasurement, on_delete=models.CASCADE, related_name="flags")
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    withdrawn_pass_at_1 = models.FloatField(null=True, blank=True)
    withdrawn_reason = models.CharField(max_length=300, blank=True)
    withdrawn_by = models.ForeignKey(
        Remeasurement,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="withdrawn_flags",
    )

    objects = SaturationFlagQuerySet.as_manager()

    class Meta:
        ordering = ["release_id", "flagged_at", "public_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["release", "public_id"],
                condition=Q(withdrawn_at__isnull=True),
                name="saturationflag_one_active",
            ),
            models.CheckConstraint(
                condition=Q(withdrawn_at__isnull=True)
                | (~Q(withdrawn_reason="") & Q(withdrawn_pass_at_1__isnull=False)),
                name="saturationflag_withdrawal_explained",
            ),
        ]

    def __str__(self):
        state = "" if self.active else " (withdrawn)"
        return f"{self.public_id} saturated at {self.pass_at_1:.3f}{state}"

    @property
    def active(self) -> bool:
        return self.withdrawn_at is None


class ReEvolution(models.Model):
    """A release's saturated problems turned into a BenchEvolver campaign (they are its seeds,
    the benchmark's current panel its target). The next version of the benchmark takes the
    campaign as a source and its changelog says what was retired and what replaced it."""

    release = models.ForeignKey(
        "releases.Release", on_delete=models.PROTECT, related_name="reevolutions"
    )
    campaign = models.OneToOneField(
        "evolution.Campaign", on_delete=models.PROTECT, related_name="reevolution"
    )
    # {public_id: why it is retired}, e.g. "saturated on 2026-11-23: pass@1 0.88 > 0.75 (m)"
    retired = models.JSONField(default=dict)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["release_id", "-created_at"]

    def __str__(self):
        return f"re-evolution of release {self.release_id} as campaign {self.campaign_id}"
