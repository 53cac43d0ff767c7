"""Campaigns, lineages, candidates and solver attempts: the engine's durable state.

Each campaign step is a state transition of one row here, claimed with a conditional
UPDATE (a lease), so a worker killed at any instant loses at most the step in flight.
"""

from __future__ import annotations

from django.conf import settings as django_settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from .workstream import WorkStream


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


class LineageState(models.TextChoices):
    PENDING = "pending"  # waiting for seed calibration
    EVOLVING = "evolving"  # proposing / validating candidates
    DONE = "done"  # a stopping rule fired
    SKIPPED = "skipped"  # seed level outside allowed_seed_levels
    FAILED = "failed"  # unrecoverable error (recorded)


class Lineage(WorkStream):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="lineages")
    seed = models.ForeignKey("Problem", on_delete=models.PROTECT, related_name="seeded_lineages")
    position = models.PositiveIntegerField(default=0)
    state = models.CharField(
        max_length=10, choices=LineageState.choices, default=LineageState.PENDING
    )
    stop_reason = models.CharField(max_length=300, blank=True)

    seed_passes = models.PositiveIntegerField(null=True, blank=True)
    seed_attempts = models.PositiveIntegerField(null=True, blank=True)
    seed_level = models.PositiveSmallIntegerField(null=True, blank=True)
    # Current parent: the last accepted problem, else the seed (Algorithm 1).
    parent = models.ForeignKey(
        "Problem", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    parent_level = models.PositiveSmallIntegerField(null=True, blank=True)
    iterations = models.PositiveIntegerField(default=0)
    accepted_count = models.PositiveIntegerField(default=0)
    no_improve = models.PositiveIntegerField(default=0)
    best_level = models.PositiveSmallIntegerField(null=True, blank=True)
    # Lineage memory (Section 3.4): list of outcome records, newest last.
    memory = models.JSONField(default=list, blank=True)

    # Lease, ticket and error fields come from WorkStream: a lineage is BenchEvolver's stream.

    class Meta:
        ordering = ["campaign_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "seed"], name="lineage_unique_seed"),
        ]
        indexes = [models.Index(fields=["campaign", "state"])]

    def __str__(self):
        return f"{self.campaign_id}/{self.seed_id} ({self.state})"


class CandidateStage(models.TextChoices):
    PROPOSED = "proposed"  # mutator + writer answered; code and statement stored
    GENERATED = "generated"  # the test-input generator program is written
    MATERIALIZED = "materialized"  # tests generated and outputs produced by executing C'
    VALIDATED = "validated"  # triangulation / faithfulness finished (valid or not)
    MEASURED = "measured"  # panel attempts done
    JUDGED = "judged"  # artificial-difficulty / duplicate review done
    DECIDED = "decided"  # final decision recorded


class Decision(models.TextChoices):
    ACCEPTED = "accepted"
    INVALID = "invalid"
    NOT_HARDER = "not_harder"
    JUDGE_REJECTED = "judge_rejected"
    DUPLICATE = "duplicate"
    ERROR = "error"


class Candidate(models.Model):
    lineage = models.ForeignKey(Lineage, on_delete=models.CASCADE, related_name="candidates")
    round = models.PositiveIntegerField(help_text="1-based iteration within the lineage")
    parent = models.ForeignKey(
        "Problem", on_delete=models.PROTECT, related_name="candidate_children"
    )
    stage = models.CharField(
        max_length=14, choices=CandidateStage.choices, default=CandidateStage.PROPOSED
    )

    title = models.CharField(max_length=300, blank=True)
    code = models.TextField(blank=True)
    code_diff = models.TextField(blank=True)
    statement = models.TextField(blank=True)
    idea = models.TextField(blank=True)
    parent_weakness = models.TextField(blank=True)
    family = models.CharField(max_length=120, blank=True)
    harness = models.CharField(max_length=16, blank=True)
    entry_point = models.CharField(max_length=200, blank=True)
    # Generated tests before acceptance: [{"tier", "input", "output", "hidden", "provenance"}]
    tests = models.JSONField(default=list, blank=True)
    generators = models.JSONField(default=dict, blank=True)
    # Each vote, each repair and its outcome, in order.
    validation_ledger = models.JSONField(default=list, blank=True)
    valid = models.BooleanField(null=True)
    repairs_used = models.PositiveIntegerField(default=0)
    spec_repairs = models.PositiveIntegerField(default=0)
    test_repairs = models.PositiveIntegerField(default=0)
    # {"endpoint name": {"passes": n, "attempts": k, "verdicts": {...}}}
    panel_results = models.JSONField(default=dict, blank=True)
    passes = models.PositiveIntegerField(null=True, blank=True)
    attempts = models.PositiveIntegerField(null=True, blank=True)
    level = models.PositiveSmallIntegerField(null=True, blank=True)
    error_pattern = models.JSONField(default=dict, blank=True)
    judge_report = models.JSONField(default=dict, blank=True)
    memory_context = models.TextField(blank=True, help_text="what the mutator's prompt saw")

    decision = models.CharField(max_length=16, choices=Decision.choices, blank=True)
    decision_reason = models.TextField(blank=True)
    accepted_problem = models.OneToOneField(
        "Problem", null=True, blank=True, on_delete=models.PROTECT, related_name="source_candidate"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["lineage_id", "round"]
        constraints = [
            models.UniqueConstraint(fields=["lineage", "round"], name="candidate_unique_round"),
            models.CheckConstraint(
                condition=Q(decision="") | Q(decision__in=[d.value for d in Decision]),
                name="candidate_decision_valid",
            ),
            models.CheckConstraint(
                condition=~Q(decision="accepted") | Q(accepted_problem__isnull=False),
                name="candidate_accepted_has_problem",
            ),
        ]
        indexes = [models.Index(fields=["decision"])]

    def __str__(self):
        return f"candidate {self.pk} (lineage {self.lineage_id} round {self.round})"

    @property
    def pass_rate(self) -> float | None:
        if not self.attempts:
            return None
        return (self.passes or 0) / self.attempts


class SolverAttempt(models.Model):
    """One target-model attempt at a seed (calibration) or a candidate (difficulty)."""

    lineage = models.ForeignKey(Lineage, on_delete=models.CASCADE, related_name="attempts")
    candidate = models.ForeignKey(
        Candidate, null=True, blank=True, on_delete=models.CASCADE, related_name="solver_attempts"
    )
    endpoint = models.ForeignKey(
        "ModelEndpoint", on_delete=models.PROTECT, related_name="solver_attempts"
    )
    attempt_index = models.PositiveIntegerField()
    code = models.TextField(blank=True)
    verdict = models.CharField(max_length=4)
    passed_tests = models.PositiveIntegerField(default=0)
    total_tests = models.PositiveIntegerField(default=0)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["lineage", "endpoint", "attempt_index"],
                condition=Q(candidate__isnull=True),
                name="solverattempt_unique_seed",
            ),
            models.UniqueConstraint(
                fields=["candidate", "endpoint", "attempt_index"],
                condition=Q(candidate__isnull=False),
                name="solverattempt_unique_candidate",
            ),
        ]

    def __str__(self):
        return f"{self.endpoint_id} attempt {self.attempt_index}: {self.verdict}"

    @property
    def passed(self) -> bool:
        return self.verdict == "AC"


class GlobalMemoryEntry(models.Model):
    """Mutation families attempted and accepted across seeds of a campaign (global memory,
    Section 3.4); families are canonical tags of the review vocabulary where one fits."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="global_memory")
    family = models.CharField(max_length=120)
    summary = models.TextField()
    level_gain = models.IntegerField(default=0)
    # Section 3.4 keeps attempted families too: False for a decided candidate not accepted.
    accepted = models.BooleanField(default=True)
    decision = models.CharField(max_length=20, blank=True)
    candidate = models.OneToOneField(
        Candidate, on_delete=models.CASCADE, related_name="global_memory_entry"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign_id", "created_at"]

    def __str__(self):
        return f"{self.family} (+{self.level_gain})"
