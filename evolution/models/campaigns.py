"""Campaigns: the platform's row for every kind's run (BenchEvolver's lineages, candidates
and solver attempts are its own, in ``evolution.benchevolver.models``).

Each campaign step is a state transition of one row here, claimed with a conditional
UPDATE (a lease), so a worker killed at any instant loses at most the step in flight.
"""

from __future__ import annotations

from django.conf import settings as django_settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


class CampaignKind(models.TextChoices):
    BENCHEVOLVER = "benchevolver", "BenchEvolver (solution-centric evolution)"
    REASONING = "reasoning", "Reasoning questions (self-evolving loop)"
    XCODER = "xcoder", "X-Coder feature-tree synthesis"
    EVOSYN = "evosyn", "EvoSyn evolved test selection"
    FRONTIERSMITH = "frontiersmith", "FrontierSmith open-ended optimisation"


class CampaignState(models.TextChoices):
    DRAFT = "draft"
    QUEUED = "queued"
    RUNNING = "running"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


# The declared state graph; services refuse any other transition.
CAMPAIGN_TRANSITIONS = {
    CampaignState.DRAFT: {CampaignState.QUEUED, CampaignState.CANCELLED},
    CampaignState.QUEUED: {CampaignState.RUNNING, CampaignState.PAUSED, CampaignState.CANCELLED},
    CampaignState.RUNNING: {
        CampaignState.PAUSED,
        CampaignState.COMPLETED,
        CampaignState.FAILED,
        CampaignState.CANCELLED,
    },
    CampaignState.PAUSED: {CampaignState.QUEUED, CampaignState.RUNNING, CampaignState.CANCELLED},
    CampaignState.COMPLETED: set(),
    CampaignState.FAILED: set(),
    CampaignState.CANCELLED: set(),
}


class Campaign(models.Model):
    name = models.CharField(max_length=200)
    kind = models.CharField(
        max_length=20, choices=CampaignKind.choices, default=CampaignKind.BENCHEVOLVER
    )
    state = models.CharField(
        max_length=12, choices=CampaignState.choices, default=CampaignState.DRAFT
    )
    state_reason = models.CharField(max_length=300, blank=True)

    seed_set = models.ForeignKey(
        "ProblemSet", null=True, blank=True, on_delete=models.PROTECT, related_name="campaigns"
    )
    seed_limit = models.PositiveIntegerField(
        null=True, blank=True, help_text="use only the first N seeds"
    )
    evolver = models.ForeignKey(
        "ModelEndpoint",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="evolver_campaigns",
    )
    # Optional per-role endpoint overrides: {"writer": endpoint_id, "judge": endpoint_id, ...}
    role_endpoints = models.JSONField(default=dict, blank=True)
    panel = models.ForeignKey(
        "Panel", null=True, blank=True, on_delete=models.PROTECT, related_name="campaigns"
    )
    settings = models.JSONField(default=dict, blank=True, help_text="validated algorithm settings")

    budget_max_calls = models.PositiveIntegerField(null=True, blank=True)
    budget_max_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    budget_max_cost = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)

    calls_made = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)

    replayed = models.BooleanField(default=False, help_text="model responses come from a cassette")
    # Only the tick chain carrying this token reschedules itself; a new chain (a worker came
    # back, a resume) replaces the token so chains never multiply.
    tick_token = models.CharField(max_length=40, blank=True)
    # The tick chain's heartbeat: written by every tick of the current chain. A running
    # campaign whose heartbeat is older than CAMPAIGN_QUIET_SECONDS lost its chain (a broker
    # restart, a failed publish) and the supervisor starts a new one.
    ticked_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="campaigns",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Pauses do not count as working time: when the current pause began (None while not
    # paused), and the seconds of every earlier pause after the campaign first ran.
    paused_at = models.DateTimeField(null=True, blank=True)
    paused_seconds = models.FloatField(default=0.0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(state__in=[s.value for s in CampaignState]), name="campaign_state_valid"
            ),
            models.CheckConstraint(
                condition=Q(paused_seconds__gte=0), name="campaign_paused_seconds_non_negative"
            ),
        ]

    def __str__(self):
        return self.name

    @property
    def is_active(self) -> bool:
        return self.state in (CampaignState.QUEUED, CampaignState.RUNNING)

    @property
    def is_finished(self) -> bool:
        return self.state in (
            CampaignState.COMPLETED,
            CampaignState.FAILED,
            CampaignState.CANCELLED,
        )

    def elapsed_seconds(self, now=None) -> float:
        """Working time: from the first start to the end (or ``now``), pauses left out.

        A paused campaign's clock stands still at the moment it was paused; a campaign paused
        before this was recorded (``paused_at`` unknown) stands still at its last update."""
        if self.started_at is None:
            return 0.0
        end = self.finished_at or now or timezone.now()
        if self.state == CampaignState.PAUSED:
            end = min(end, self.paused_at or self.updated_at or end)
        elif self.paused_at is not None:
            end = min(end, self.paused_at)
        return max(0.0, (end - self.started_at).total_seconds() - self.paused_seconds)
