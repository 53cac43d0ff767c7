"""X-Coder / SynthSmith campaigns (seed document 003) as a campaign kind.

The evolution ``Campaign`` row carries the lifecycle, budget and tick chain; ``XcoderCampaign``
adds the solver endpoints, the feature-tree statistics and the lease that claims the campaign's
one sequential stream of work (the tree must be grown before tasks are sampled from it).

Every stage stores its result as it arrives, under a unique constraint, so a rerun after a crash
never duplicates an extraction, a tree node, a task or a candidate solution.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from evolution.streams.models import WorkStream


class XcoderCampaign(WorkStream):
    campaign = models.OneToOneField(
        "evolution.Campaign", primary_key=True, on_delete=models.CASCADE, related_name="xcoder"
    )
    generator_endpoint = models.ForeignKey(
        "evolution.ModelEndpoint", on_delete=models.PROTECT, related_name="+"
    )
    # Candidate solutions come from several endpoints (section 2 (iii)): model-specific biases
    # cancel out in the vote.
    solver_endpoints = models.ManyToManyField("evolution.ModelEndpoint", related_name="+")
    # Where accepted problems are collected, so releases take them like any problem set.
    problem_set = models.ForeignKey(
        "evolution.ProblemSet", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    tree_merged = models.BooleanField(default=False)
    # Table 8: features per category after extraction and after evolution.
    counts_extracted = models.JSONField(default=dict, blank=True)
    counts_evolved = models.JSONField(default=dict, blank=True)

    def __str__(self):
        return f"X-Coder {self.campaign}"


class ExtractionStatus(models.TextChoices):
    OK = "ok"
    FAILED = "failed"


class FeatureExtraction(models.Model):
    """One seed problem's features as the extraction prompt returned them (appendix B.1)."""

    xcoder = models.ForeignKey(XcoderCampaign, on_delete=models.CASCADE, related_name="extractions")
    problem = models.ForeignKey("evolution.Problem", on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=10, choices=ExtractionStatus.choices)
    reason = models.CharField(max_length=500, blank=True)
    features = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["xcoder", "problem"], name="xcoder_extraction_unique")
        ]

    def __str__(self):
        return f"features of problem {self.problem_id} ({self.status})"


class NodeOrigin(models.TextChoices):
    EXTRACTED = "extracted"
    BREADTH = "breadth", "evolved in breadth (new sibling)"
    DEPTH = "depth", "evolved in depth (finer sub-feature)"


class FeatureNode(models.Model):
    """A node of the campaign's merged feature tree. ``path`` is the node's names from the
    category down, joined with " / "; the category node itself has depth 0."""

    xcoder = models.ForeignKey(XcoderCampaign, on_delete=models.CASCADE, related_name="nodes")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="children"
    )
    category = models.CharField(max_length=60)
    name = models.CharField(max_length=200)
    path = models.CharField(max_length=1000)
    depth = models.PositiveSmallIntegerField(default=0)
    origin = models.CharField(max_length=10, choices=NodeOrigin.choices)
    evolution_round = models.PositiveSmallIntegerField(default=0)
    # The seed problems whose extraction named this feature (ids); evolved nodes have none.
    sources = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["path"]
        constraints = [
            models.UniqueConstraint(fields=["xcoder", "path"], name="xcoder_node_unique_path")
        ]

    def __str__(self):
        return self.path


class EvolutionStep(models.Model):
    """One evolution call, stored so a rerun does not repeat it: one category of the merged tree
    for one round (``evolution_scope`` "tree"), or one seed's extracted features for one round
    (``problem`` set, ``category`` empty; scope "seed", evolve-then-merge), whose evolved tree
    and new paths are kept in ``evolved`` until the merge."""

    xcoder = models.ForeignKey(XcoderCampaign, on_delete=models.CASCADE, related_name="evolutions")
    round = models.PositiveSmallIntegerField()
    category = models.CharField(max_length=60, blank=True)
    problem = models.ForeignKey(
        "evolution.Problem", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    status = models.CharField(max_length=10, choices=ExtractionStatus.choices)
    reason = models.CharField(max_length=500, blank=True)
    added_breadth = models.PositiveIntegerField(default=0)
    added_depth = models.PositiveIntegerField(default=0)
    # Scope "seed": {"tree": {category: subtree}, "depth": [paths], "breadth": [paths]}.
    evolved = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["round", "category", "problem_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["xcoder", "round", "category"],
                condition=Q(problem__isnull=True),
                name="xcoder_evolution_unique",
            ),
            models.UniqueConstraint(
                fields=["xcoder", "round", "problem"],
                condition=Q(problem__isnull=False),
                name="xcoder_seed_evolution_unique",
            ),
        ]

    def __str__(self):
        if self.problem_id:
            return f"evolution round {self.round} of seed {self.problem_id}"
        return f"evolution round {self.round} of {self.category}"


class TaskStatus(models.TextChoices):
    PLANNED = "planned"  # subtree sampled, style chosen
    SELECTED = "selected"  # stage 1: roles, selected subset, integration strategy
    WRITTEN = "written"  # stage 2: statement passed the gates
    TESTED = "tested"  # test inputs generated
    SOLVED = "solved"  # candidate solutions stored
    ACCEPTED = "accepted"  # dual verification confirmed a golden solution
    REJECTED = "rejected"  # a statement stage refused it (reason names the gate)
    DISCARDED = "discarded"  # dual verification refused it (reason says why)
    ERROR = "error"  # a step failed repeatedly


TERMINAL_TASK_STATES = (
    TaskStatus.ACCEPTED,
    TaskStatus.REJECTED,
    TaskStatus.DISCARDED,
    TaskStatus.ERROR,
)


class TaskStyle(models.TextChoices):
    CODEFORCES = "codeforces", "Codeforces"
    ATCODER = "atcoder", "AtCoder"
    LEETCODE = "leetcode", "LeetCode (starter code)"


class SynthTask(models.Model):
    xcoder = models.ForeignKey(XcoderCampaign, on_delete=models.CASCADE, related_name="tasks")
    index = models.PositiveIntegerField()
    style = models.CharField(max_length=12, choices=TaskStyle.choices)
    status = models.CharField(max_length=10, choices=TaskStatus.choices)
    # Machine-readable reason code (a gate name, "holdout_disagrees", ...) and its detail.
    reason_code = models.CharField(max_length=40, blank=True)
    reason = models.TextField(blank=True)

    sampled_tree = models.JSONField(default=dict, blank=True)
    roles_tree = models.JSONField(default=dict, blank=True)
    selected_tree = models.JSONField(default=dict, blank=True)
    integration_strategy = models.TextField(blank=True)

    title = models.CharField(max_length=300, blank=True)
    statement = models.TextField(blank=True)
    entry_point = models.CharField(max_length=200, blank=True)
    starter_code = models.TextField(blank=True)
    gate_results = models.JSONField(default=list, blank=True)

    # [{"input", "category", "source": "prompt"|"generator", "description"}]
    tests = models.JSONField(default=list, blank=True)
    generator_code = models.TextField(blank=True)
    generator_seed = models.IntegerField(null=True, blank=True)
    test_notes = models.JSONField(default=list, blank=True)

    # The dual verification, in full (voting.Verification.to_dict()): labels, weights, split,
    # the vote matrix, scores, and the golden candidate.
    verification = models.JSONField(default=dict, blank=True)
    problem = models.ForeignKey(
        "evolution.Problem", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # B.3 done differently (engine/difficulty.py): the judge model's Codeforces-style rating of
    # an accepted task, {"status": "ok", "method", "rating", "table10_bin", "raw", "rationale",
    # "judge", "call_id"} or {"status": "failed", "method", "reason"}; empty: not estimated.
    difficulty = models.JSONField(default=dict, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["xcoder_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["xcoder", "index"], name="xcoder_task_unique_index"),
            models.CheckConstraint(
                condition=Q(status__in=[s.value for s in TaskStatus]), name="xcoder_task_status"
            ),
        ]

    def __str__(self):
        return f"task {self.index} ({self.style}, {self.status})"

    @property
    def harness(self) -> str:
        return "function" if self.style == TaskStyle.LEETCODE else "stdio"


class CandidateSolution(models.Model):
    """One candidate solution A^j from one endpoint, with its static-gate verdict."""

    task = models.ForeignKey(SynthTask, on_delete=models.CASCADE, related_name="solutions")
    endpoint = models.ForeignKey(
        "evolution.ModelEndpoint", on_delete=models.PROTECT, related_name="+"
    )
    sample = models.PositiveSmallIntegerField()
    content = models.TextField(blank=True)
    code = models.TextField(blank=True)
    tokens_out = models.PositiveIntegerField(default=0)
    passed_gates = models.BooleanField(default=False)
    reason = models.CharField(max_length=500, blank=True)
    call_id = models.PositiveBigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["task_id", "endpoint_id", "sample"]
        constraints = [
            models.UniqueConstraint(
                fields=["task", "endpoint", "sample"], name="xcoder_solution_unique"
            )
        ]

    def __str__(self):
        return f"candidate {self.endpoint_id}/{self.sample} of task {self.task_id}"
