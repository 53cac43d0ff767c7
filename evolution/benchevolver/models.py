"""BenchEvolver's durable state: lineages, candidates, solver attempts and global memory.

The tables keep their first names (``evolution_lineage``, ``evolution_candidate``,
``evolution_solverattempt``, ``evolution_globalmemoryentry``): they moved here from the
platform's ``evolution.models`` by state-only migrations (``evolution`` 0012 and
``benchevolver`` 0001), so no row moved. Each step is a state transition of one row here,
claimed with a conditional UPDATE (a lease), so a worker killed at any instant loses at most
the step in flight.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from evolution.models import Campaign
from evolution.models.workstream import WorkStream


class LineageState(models.TextChoices):
    PENDING = "pending"  # waiting for seed calibration
    EVOLVING = "evolving"  # proposing / validating candidates
    DONE = "done"  # a stopping rule fired
    SKIPPED = "skipped"  # seed level outside allowed_seed_levels
    FAILED = "failed"  # unrecoverable error (recorded)


class Lineage(WorkStream):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="lineages")
    seed = models.ForeignKey(
        "evolution.Problem", on_delete=models.PROTECT, related_name="seeded_lineages"
    )
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
        "evolution.Problem", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
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
        db_table = "evolution_lineage"
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
        "evolution.Problem", on_delete=models.PROTECT, related_name="candidate_children"
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
        "evolution.Problem",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="source_candidate",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "evolution_candidate"
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
        "evolution.ModelEndpoint", on_delete=models.PROTECT, related_name="solver_attempts"
    )
    attempt_index = models.PositiveIntegerField()
    code = models.TextField(blank=True)
    verdict = models.CharField(max_length=4)
    passed_tests = models.PositiveIntegerField(default=0)
    total_tests = models.PositiveIntegerField(default=0)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "evolution_solverattempt"
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
        db_table = "evolution_globalmemoryentry"
        ordering = ["campaign_id", "created_at"]

    def __str__(self):
        return f"{self.family} (+{self.level_gain})"
