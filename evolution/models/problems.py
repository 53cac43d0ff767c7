"""A task I = (S, C, T, E): statement, reference solution, hidden tests, harness."""

from __future__ import annotations

import secrets

from django.db import models
from django.db.models import Q

from .fields import pack_text, unpack_text


def new_public_id() -> str:
    # Opaque, random and meaningless: never derived from pk, dataset or date.
    return "p" + secrets.token_hex(8)


class Harness(models.TextChoices):
    STDIO = "stdio", "stdin / stdout"
    FUNCTION = "function", "function call"
    ASSERT = "assert", "assertion program"


class ProblemKind(models.TextChoices):
    SEED = "seed", "seed (imported)"
    EVOLVED = "evolved", "evolved"
    SYNTHESIZED = "synthesized", "synthesized from scratch"


class ProblemSet(models.Model):
    name = models.CharField(max_length=120, unique=True)
    description = models.TextField(blank=True)
    source = models.CharField(max_length=40, blank=True, help_text="importer that created it")
    problems = models.ManyToManyField("Problem", related_name="problem_sets", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Problem(models.Model):
    public_id = models.CharField(max_length=24, unique=True, default=new_public_id, editable=False)
    title = models.CharField(max_length=300)
    statement = models.TextField(help_text="Markdown")
    reference_solution = models.TextField(blank=True)
    # Where the reference came from, e.g. {"source": "solutions-file", "file": "sols.jsonl",
    # "line": 3, "tests_passed": "5/5"}; described by ``describe_reference_provenance``.
    reference_provenance = models.JSONField(default=dict, blank=True)
    harness = models.CharField(max_length=16, choices=Harness.choices)
    entry_point = models.CharField(max_length=200, blank=True)
    starter_code = models.TextField(blank=True)
    time_limit_s = models.FloatField(default=6.0)
    memory_mb = models.PositiveIntegerField(default=512)
    # Output comparison: {"mode": "exact"|"float"|"unordered", "rel_tol", "abs_tol", "checker": code}
    comparison = models.JSONField(default=dict, blank=True)

    kind = models.CharField(max_length=16, choices=ProblemKind.choices, default=ProblemKind.SEED)
    method = models.CharField(
        max_length=32, default="imported", help_text="how the problem was made"
    )
    origin_dataset = models.CharField(max_length=60, blank=True)
    origin_id = models.CharField(max_length=200, blank=True)
    origin_difficulty = models.CharField(max_length=30, blank=True)
    contest_date = models.DateTimeField(null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    lineage_root = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="lineage_members"
    )
    lineage_depth = models.PositiveIntegerField(default=0)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["origin_dataset", "origin_id"],
                condition=~Q(origin_id=""),
                name="problem_unique_origin",
            ),
            models.CheckConstraint(
                condition=Q(harness__in=["stdio", "function", "assert"]),
                name="problem_harness_valid",
            ),
            models.CheckConstraint(
                condition=Q(time_limit_s__gt=0), name="problem_time_limit_positive"
            ),
            models.CheckConstraint(
                condition=Q(memory_mb__gte=16), name="problem_memory_at_least_16mb"
            ),
            models.CheckConstraint(
                condition=Q(kind="seed") | Q(parent__isnull=False),
                name="problem_evolved_has_parent",
            ),
        ]
        indexes = [models.Index(fields=["kind", "method"])]

    def __str__(self):
        return f"{self.title} [{self.public_id}]"

    @property
    def root(self) -> Problem:
        return self.lineage_root or self

    @property
    def reference_origin(self) -> str:
        """Where the reference solution came from, in words ("" without a reference)."""
        if not self.reference_solution.strip():
            return ""
        return describe_reference_provenance(self.reference_provenance)


def describe_reference_provenance(provenance: dict | None) -> str:
    """A reference's provenance in words: "solutions file sols.jsonl, line 3; passed 5/5 of
    the record's tests at import", "calibration attempt 0 by model m (…)", …"""
    p = provenance or {}
    source = p.get("source")
    if not source:
        return "not recorded"
    if source == "record":
        dataset = p.get("dataset")
        text = f"the {dataset} record itself" if dataset else "the imported record itself"
    elif source == "solutions-file":
        text = f"solutions file {p.get('file', '?')}"
        if p.get("line"):
            text += f", line {p['line']}"
    elif source == "calibration":
        text = (
            f"calibration attempt {p.get('attempt')} by model {p.get('model') or p.get('endpoint')}"
            f" (endpoint {p.get('endpoint')}, campaign {p.get('campaign')}, "
            f"{p.get('tests_passed', '?')} tests passed)"
        )
    elif source == "benchevolver":
        text = f"the accepted candidate {p.get('candidate')} of BenchEvolver campaign {p.get('campaign')}"
    elif source == "xcoder":
        text = f"the golden solution of X-Coder campaign {p.get('campaign')}"
    elif source == "evosyn":
        text = f"the strongest solution of EvoSyn campaign {p.get('campaign')}"
    elif source == "frontiersmith":
        text = f"the baseline of candidate {p.get('candidate')} of FrontierSmith campaign {p.get('campaign')}"
    else:
        details = ", ".join(f"{k} {v}" for k, v in p.items() if k != "source")
        text = source + (f" ({details})" if details else "")
    if p.get("tests_passed") and source in ("record", "solutions-file"):
        text += f"; passed {p['tests_passed']} of the record's tests at import"
    return text


class TestTier(models.TextChoices):
    PUBLIC = "public", "public example"
    SMALL = "small", "small"
    MEDIUM = "medium", "medium"
    LARGE = "large", "large"
    STRESS = "stress", "stress"
    ASSERT = "assert", "assertion program"


class TestCase(models.Model):
    """One test. For stdio: stdin and expected stdout. For function: JSON args per line
    (LiveCodeBench call-based form). For assert: ``input`` holds the test program."""

    __test__ = False  # not a pytest class

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="tests")
    tier = models.CharField(max_length=10, choices=TestTier.choices)
    ordinal = models.PositiveIntegerField(default=0)
    hidden = models.BooleanField(default=True)
    input_text = models.TextField(blank=True)
    input_blob = models.BinaryField(null=True, blank=True)
    output_text = models.TextField(blank=True)
    output_blob = models.BinaryField(null=True, blank=True)
    # How the test was made: {"generator": code sha, "seed": n, "source": "lcb-private", ...}
    provenance = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["problem_id", "tier", "ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["problem", "tier", "ordinal"], name="testcase_unique_position"
            ),
            models.CheckConstraint(
                condition=Q(tier__in=["public", "small", "medium", "large", "stress", "assert"]),
                name="testcase_tier_valid",
            ),
            models.CheckConstraint(
                condition=~Q(tier="public") | Q(hidden=False), name="testcase_public_not_hidden"
            ),
        ]

    def __str__(self):
        return f"{self.problem.public_id} {self.tier}#{self.ordinal}"

    @property
    def input(self) -> str:
        return unpack_text(self.input_text, self.input_blob)

    @input.setter
    def input(self, value: str) -> None:
        self.input_text, self.input_blob = pack_text(value)

    @property
    def output(self) -> str:
        return unpack_text(self.output_text, self.output_blob)

    @output.setter
    def output(self, value: str) -> None:
        self.output_text, self.output_blob = pack_text(value)
