"""FrontierSmith campaigns: open-ended problems mutated from closed-ended seeds.

The evolution ``Campaign`` row carries the lifecycle, budget and tick chain;
``FrontierCampaign`` adds the role endpoints, the seed pool (seeds plus accepted problems, fed
back every round) and the lease claiming the campaign's one stream of work. Every unit of work
is a row with a unique key, so a rerun after a crash never duplicates a candidate, a sampled
solution or an accepted problem.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from evolution.streams.models import WorkStream


class FrontierCampaign(WorkStream):
    campaign = models.OneToOneField(
        "evolution.Campaign", primary_key=True, on_delete=models.CASCADE, related_name="frontier"
    )
    # Mutation, coarse filter and pairwise divergence judge (one strong model in the paper).
    mutator_endpoint = models.ForeignKey(
        "evolution.ModelEndpoint", on_delete=models.PROTECT, related_name="+"
    )
    # Sampled solutions and the scoring environment's four programs (the paper's second model).
    solver_endpoint = models.ForeignKey(
        "evolution.ModelEndpoint", on_delete=models.PROTECT, related_name="+"
    )
    seed_pool = models.ForeignKey(
        "evolution.ProblemSet", on_delete=models.PROTECT, related_name="+"
    )
    output_set = models.ForeignKey(
        "evolution.ProblemSet", on_delete=models.PROTECT, related_name="+"
    )
    # Labelled sets that measure the coarse filter: closed-ended should be rejected,
    # open-ended accepted.
    calibration_closed = models.ForeignKey(
        "evolution.ProblemSet", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    calibration_open = models.ForeignKey(
        "evolution.ProblemSet", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    current_round = models.PositiveIntegerField(default=1)

    def __str__(self):
        return f"FrontierSmith settings of campaign {self.campaign_id}"


class FilterProbe(models.Model):
    """The coarse filter's verdict on one labelled problem (its false-positive and
    false-negative rates come from these)."""

    class Label(models.TextChoices):
        CLOSED = "closed", "closed-ended (should be rejected)"
        OPEN = "open", "open-ended (should be accepted)"

    frontier = models.ForeignKey(FrontierCampaign, on_delete=models.CASCADE, related_name="probes")
    problem = models.ForeignKey("evolution.Problem", on_delete=models.PROTECT, related_name="+")
    label = models.CharField(max_length=6, choices=Label.choices)
    accepted = models.BooleanField(null=True, help_text="None: the answer was unusable")
    verdict = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["frontier_id", "label", "problem_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["frontier", "problem", "label"], name="filterprobe_unique"
            ),
        ]

    def __str__(self):
        return f"{self.label} probe {self.problem_id}: {self.accepted}"


class SeedFormulation(models.Model):
    """c = (O, C_I, C_O) of a pool problem, extracted once per campaign (or carried over from
    the candidate that became the problem)."""

    frontier = models.ForeignKey(
        FrontierCampaign, on_delete=models.CASCADE, related_name="formulations"
    )
    problem = models.ForeignKey("evolution.Problem", on_delete=models.PROTECT, related_name="+")
    goal = models.TextField(blank=True)
    inputs = models.TextField(blank=True)
    outputs = models.TextField(blank=True)
    error = models.TextField(blank=True, help_text="why extraction failed, if it did")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["frontier", "problem"], name="seedformulation_unique"),
        ]

    def __str__(self):
        return f"formulation of {self.problem_id}"

    @property
    def ok(self) -> bool:
        return not self.error

    def as_dict(self) -> dict:
        return {"goal": self.goal, "inputs": self.inputs, "outputs": self.outputs}


class FrontierRound(models.Model):
    frontier = models.ForeignKey(FrontierCampaign, on_delete=models.CASCADE, related_name="rounds")
    number = models.PositiveIntegerField()
    # Problem ids of the seed pool when the round started: proposals draw from this list.
    pool = models.JSONField(default=list)
    funnel = models.JSONField(default=dict, blank=True)
    div_selected = models.BooleanField(default=False)
    closed = models.BooleanField(default=False)
    started_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["frontier_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["frontier", "number"], name="frontierround_unique"),
        ]

    def __str__(self):
        return f"round {self.number} of {self.frontier_id}"


class CandidateStage(models.TextChoices):
    PROPOSED = "proposed"  # mutation parsed; waiting for the coarse filter
    FILTERED = "filtered"  # passed the coarse filter; sampling solutions, judging pairs
    JUDGED = "judged"  # model-judged divergence known
    BUILDING = "building"  # kept in the top N_div; generator / verifier being built
    EXECUTED = "executed"  # converged; score vectors and execution divergence known
    DONE = "done"  # decided


class CandidateDecision(models.TextChoices):
    ACCEPTED = "accepted"
    UNPARSABLE = "unparsable"
    FILTERED_OUT = "filtered_out"
    LOW_DIVERGENCE = "low_divergence"
    NOT_CONVERGED = "not_converged"
    LOW_EXEC_DIVERGENCE = "low_exec_divergence"
    # Converged, but fewer than two sampled solutions could be scored: never accepted.
    UNMEASURED_DIVERGENCE = "no_exec_divergence"


class FrontierCandidate(models.Model):
    frontier = models.ForeignKey(
        FrontierCampaign, on_delete=models.CASCADE, related_name="candidates"
    )
    round = models.PositiveIntegerField()
    index = models.PositiveIntegerField(help_text="0-based proposal index within the round")
    parent = models.ForeignKey("evolution.Problem", on_delete=models.PROTECT, related_name="+")
    operator = models.CharField(max_length=20)
    parent_formulation = models.JSONField(default=dict, blank=True)
    formulation = models.JSONField(default=dict, blank=True)
    title = models.CharField(max_length=300, blank=True)
    statement = models.TextField(blank=True)
    objective = models.CharField(max_length=500, blank=True)
    direction = models.CharField(max_length=3, blank=True)
    stage = models.CharField(
        max_length=10, choices=CandidateStage.choices, default=CandidateStage.PROPOSED
    )

    filter_verdict = models.JSONField(default=dict, blank=True)
    filter_passed = models.BooleanField(null=True)
    # Sampled solutions, index = sample number; "" when the answer held no code.
    solutions = models.JSONField(default=list, blank=True)
    # {"i-j": 1.0 different | 0.0 same | None unusable answer}
    pair_verdicts = models.JSONField(default=dict, blank=True)
    judged_divergence = models.FloatField(null=True, blank=True)

    # The two agents' rounds so far (stages/build.py, engine/agents.py).
    build_attempts = models.PositiveSmallIntegerField(default=0)
    # One entry per round of the two agents: {"attempt": round, "asked": [programs written in
    # it], "reviews": {agent: its tool calls and verdict}, "agreed", "gate": the fixed-rule
    # checks' result once both accepted, "problems", "checks", "blame": {program: [...]},
    # "tests": m}
    build_ledger = models.JSONField(default=list, blank=True)
    # Where each of the four programs (generator from the test-case agent; verifier, baseline
    # and weak solution from the verifier agent) stands: {program: {"attempt", "call_id",
    # "state": "kept" | "failed" | "unparsable" | "passed", "problems": [...]}}. Only the
    # programs a defect was named against are written again.
    build_parts = models.JSONField(default=dict, blank=True)
    generator = models.TextField(blank=True)
    verifier = models.TextField(blank=True)
    baseline = models.TextField(blank=True)
    weak = models.TextField(blank=True)
    # [{"input", "baseline_output"}] once converged
    tests = models.JSONField(default=list, blank=True)
    # One score vector per sampled solution (V per test), once converged.
    score_matrix = models.JSONField(default=list, blank=True)
    execution_divergence = models.FloatField(null=True, blank=True)
    score_spread = models.FloatField(null=True, blank=True)

    decision = models.CharField(max_length=20, choices=CandidateDecision.choices, blank=True)
    decision_reason = models.TextField(blank=True)
    accepted_problem = models.OneToOneField(
        "evolution.Problem",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="frontier_candidate",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["frontier_id", "round", "index"]
        constraints = [
            models.UniqueConstraint(
                fields=["frontier", "round", "index"], name="frontiercandidate_unique"
            ),
            models.CheckConstraint(
                condition=~Q(decision="accepted") | Q(accepted_problem__isnull=False),
                name="frontiercandidate_accepted_has_problem",
            ),
        ]

    def __str__(self):
        return f"round {self.round} #{self.index}: {self.title or self.operator}"

    @property
    def environment_parts(self) -> list[tuple[str, dict]]:
        """(program, its build_parts entry) for the four programs, in the order asked."""
        parts = self.build_parts or {}
        return [
            (name, parts.get(name, {})) for name in ("generator", "verifier", "baseline", "weak")
        ]


class NoFilterAblation(models.Model):
    """The no-filter ablation of one campaign (seed document 002: the same mutations with the
    coarse filter and the divergence filters skipped). The ablation arm is a campaign of its own
    (``arm``, never launched) holding copies of the filtered run's candidates; its model calls
    are charged to it. ``summary`` holds both arms' measures side by side, ``candidates`` one
    row per candidate (``frontiersmith/ablation.py``)."""

    frontier = models.ForeignKey(
        FrontierCampaign, on_delete=models.CASCADE, related_name="ablations"
    )
    arm = models.OneToOneField(
        FrontierCampaign,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="ablation_of",
    )
    # Some answers either arm used came from a replay cassette (the programs ran live).
    replayed = models.BooleanField(default=False)
    summary = models.JSONField(default=dict, blank=True)
    candidates = models.JSONField(default=list, blank=True)
    calls = models.PositiveIntegerField(default=0, help_text="model calls the arm made")
    reused = models.PositiveIntegerField(
        default=0, help_text="candidates whose stored answers the arm took from the filtered run"
    )
    stopped = models.TextField(blank=True, help_text="why the arm stopped early, if it did")
    elapsed_s = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["frontier_id", "-created_at"]

    def __str__(self):
        return f"no-filter ablation {self.pk} of {self.frontier_id}"
