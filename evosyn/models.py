"""EvoSyn campaigns (seed 001) as a campaign kind.

The evolution ``Campaign`` row carries the lifecycle, budget and tick chain; ``EvoSynCampaign``
adds the MAP-Elites archive, the sandbox cost spent, and the lease that claims the campaign's
one sequential stream of work. An ``Instance`` is one problem with its M solutions, N tests and
M x N pass matrix: human-verified seeds (scoring strategies) and synthesized problems (filtered
by the best strategy). As in the document, a "testing" is one unit-test list (what one
test-writer call wrote, ``TestItem.call``); the matrix is solutions x testings, and a solution
passes a testing when it passes every unit test in it. Unique constraints make every rerun of a step skip what exists.
"""

from __future__ import annotations

from django.conf import settings as django_settings
from django.db import models
from django.db.models import Q

from evolution.streams.models import WorkStream


class EvoSynCampaign(WorkStream):
    campaign = models.OneToOneField(
        "evolution.Campaign", primary_key=True, on_delete=models.CASCADE, related_name="evosyn"
    )
    # {"islands": [{cell: {"strategy": id, "score": s}}], "migrations": [...]}
    archive = models.JSONField(default=dict, blank=True)
    best_strategy = models.ForeignKey(
        "Strategy", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    sandbox_executions = models.PositiveBigIntegerField(default=0)
    # Kept problems are collected here so a release can take them as a problem set.
    output_set = models.ForeignKey(
        "evolution.ProblemSet", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self):
        return f"EvoSyn state of campaign {self.campaign_id}"


class InstanceRole(models.TextChoices):
    SEED = "seed", "human-verified seed"
    SYNTHETIC = "synthetic", "synthesized problem"


class InstanceStatus(models.TextChoices):
    PENDING = "pending"  # solutions / tests being collected
    READY = "ready"  # matrix computed
    KEPT = "kept"  # synthetic: passed the filter, a Problem was made
    PRUNED = "pruned"  # synthetic: discarded, reason recorded
    UNUSABLE = "unusable"  # seed: too few solutions or tests to score strategies on


class Instance(models.Model):
    evosyn = models.ForeignKey(EvoSynCampaign, on_delete=models.CASCADE, related_name="instances")
    role = models.CharField(max_length=10, choices=InstanceRole.choices)
    slot = models.PositiveIntegerField(help_text="position within its role")
    # Seeds: the seed problem itself. Synthetic: the seed shown as the in-context example.
    problem = models.ForeignKey(
        "evolution.Problem", on_delete=models.PROTECT, related_name="evosyn_instances"
    )
    title = models.CharField(max_length=300, blank=True)
    statement = models.TextField(blank=True)
    entry_point = models.CharField(max_length=200, blank=True)
    status = models.CharField(
        max_length=10, choices=InstanceStatus.choices, default=InstanceStatus.PENDING
    )
    status_reason = models.TextField(blank=True)
    test_calls_made = models.PositiveSmallIntegerField(default=0)
    # matrix["rows"][i][j] = 1 when solution i passes every unit test of testing j (solutions by
    # Solution.index, testings by their TestItem.call: matrix["tests"] lists those numbers)
    matrix = models.JSONField(null=True, blank=True)
    # Seeds: per solution, does it pass the human tests.
    human = models.JSONField(null=True, blank=True)
    # Synthetic: the best strategy's ranking, the strongest solution and the selected tests.
    ranking = models.JSONField(default=dict, blank=True)
    kept_problem = models.OneToOneField(
        "evolution.Problem",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="evosyn_source",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["evosyn_id", "role", "slot"]
        constraints = [
            models.UniqueConstraint(fields=["evosyn", "role", "slot"], name="evosyn_instance_slot"),
        ]

    def __str__(self):
        return f"{self.role} {self.slot} of {self.evosyn_id}"

    @property
    def harness(self) -> str:
        """How its candidate solutions run: a function (an entry point) or stdin/stdout."""
        return "function" if self.entry_point else "stdio"

    def testings(self) -> dict[int, list[TestItem]]:
        """{testing number: its unit tests in order}: one entry per test-writer call that gave
        at least one unit test."""
        grouped: dict[int, list[TestItem]] = {}
        for item in self.tests.order_by("call", "index"):
            grouped.setdefault(item.call, []).append(item)
        return grouped

    @property
    def human_passing(self) -> int | None:
        """How many of the M solutions pass the human tests (None before they ran)."""
        return None if self.human is None else sum(1 for passed in self.human if passed)


class Solution(models.Model):
    instance = models.ForeignKey(Instance, on_delete=models.CASCADE, related_name="solutions")
    index = models.PositiveSmallIntegerField()
    code = models.TextField(blank=True)
    code_sha = models.CharField(max_length=24, blank=True)
    error = models.TextField(blank=True, help_text="why there is no code (call or parse failure)")
    call_id = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["instance_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["instance", "index"], name="evosyn_solution_index"),
        ]

    def __str__(self):
        return f"solution {self.index} of instance {self.instance_id}"


class TestItem(models.Model):
    __test__ = False

    instance = models.ForeignKey(Instance, on_delete=models.CASCADE, related_name="tests")
    index = models.PositiveSmallIntegerField()
    input = models.TextField()
    output = models.TextField()
    call = models.PositiveSmallIntegerField(
        default=0, help_text="its testing: the test-writer call whose unit-test list it is in"
    )
    input_expr = models.TextField(
        blank=True,
        default="",
        help_text="the input as the test writer wrote it, Python code for eval() (Figure 6), "
        "evaluated in the sandbox; empty for a literal input",
    )
    input_expr_state = models.CharField(
        max_length=10,
        blank=True,
        default="",
        choices=[("", "not evaluated yet"), ("evaluated", "evaluated"), ("literal", "literal")],
        help_text="evaluated: the input is the code's value; literal: the code did not evaluate "
        "(or not to an input), the text is the input",
    )

    class Meta:
        ordering = ["instance_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["instance", "index"], name="evosyn_test_index"),
        ]

    def __str__(self):
        return f"test {self.index} of instance {self.instance_id}"


class ProgramStatus(models.TextChoices):
    OK = "ok"  # ran and printed at least one unit test: its list is the call's testing
    FAILED = "failed"  # the sandbox stopped it or it crashed: no testing
    NO_TESTS = "no_tests"  # ran, but printed no {input, output} list: no testing
    UNPARSABLE = "unparsable"  # the answer held no program


class TestProgram(models.Model):
    """Section 4.3's variant (setting ``tests_as_code``): the program one test-writer call
    answered with, run in the sandbox; the unit tests it printed are that call's testing."""

    __test__ = False

    instance = models.ForeignKey(Instance, on_delete=models.CASCADE, related_name="test_programs")
    call = models.PositiveSmallIntegerField(help_text="the test-writer call (testing number)")
    code = models.TextField(blank=True)
    status = models.CharField(max_length=12, choices=ProgramStatus.choices)
    error = models.TextField(blank=True)
    unit_tests = models.PositiveIntegerField(default=0, help_text="unit tests it printed")
    call_id = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["instance_id", "call"]
        constraints = [
            models.UniqueConstraint(fields=["instance", "call"], name="evosyn_testprogram_call"),
        ]

    def __str__(self):
        return f"test program {self.call} of instance {self.instance_id} ({self.status})"


class MatrixRow(models.Model):
    """The cache of executions: one solution's verdicts on one test suite. A rerun, or the
    same solution on the same tests in another instance, never executes again."""

    code_sha = models.CharField(max_length=64)
    suite_sha = models.CharField(max_length=64)
    verdicts = models.JSONField(help_text="one verdict (AC, WA, TLE, ...) per test")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["code_sha", "suite_sha"], name="evosyn_matrixrow_key"),
        ]

    def __str__(self):
        return f"{self.code_sha[:8]} on {self.suite_sha[:8]}"


class StrategyStatus(models.TextChoices):
    OK = "ok"  # ran on every seed instance
    PARTIAL = "partial"  # failed on some instances (those count as unsatisfied)
    FAILED = "failed"  # crashed, timed out or printed garbage everywhere: score 0
    UNPARSABLE = "unparsable"  # the model's answer held no program: score 0


class Strategy(models.Model):
    """One filtering-strategy program, versioned in the order the search made them."""

    evosyn = models.ForeignKey(EvoSynCampaign, on_delete=models.CASCADE, related_name="strategies")
    version = models.PositiveIntegerField(help_text="1 = the document's initial strategy")
    iteration = models.PositiveIntegerField(help_text="0 = initial, then 1..max_iterations")
    island = models.PositiveSmallIntegerField(default=0)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children"
    )
    code = models.TextField(blank=True)
    status = models.CharField(max_length=12, choices=StrategyStatus.choices)
    error = models.TextField(blank=True)
    score = models.FloatField(default=0.0)
    criterion1 = models.FloatField(default=0.0)
    criterion2 = models.FloatField(default=0.0)
    cell = models.CharField(max_length=20, blank=True, help_text="MAP-Elites cell")
    placed = models.BooleanField(default=False, help_text="entered its island's archive")
    best_so_far = models.FloatField(default=0.0)
    evaluation = models.JSONField(default=dict, blank=True)
    call_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["evosyn_id", "version"]
        constraints = [
            models.UniqueConstraint(fields=["evosyn", "version"], name="evosyn_strategy_version"),
            models.UniqueConstraint(
                fields=["evosyn", "iteration"], name="evosyn_strategy_iteration"
            ),
            models.CheckConstraint(
                condition=Q(score__gte=0) & Q(score__lte=1), name="evosyn_strategy_score_range"
            ),
        ]

    def __str__(self):
        return f"strategy v{self.version} ({self.score:.3f})"


class ControlVariant(models.TextChoices):
    RANDOM = "random", "D^random: one random testing per kept problem"
    RELAXED = "relaxed", "D^relaxed: kept problems plus those only Zero-Variance Pruning dropped"


class ControlSet(models.Model):
    """A comparison dataset of the document's section 4.3. D^random: the kept problems, each
    with one testing drawn at random (seeded) from its N candidates instead of the strategy's
    selection. D^relaxed: the data without Zero-Variance Pruning, a superset of the kept
    problems."""

    evosyn = models.ForeignKey(EvoSynCampaign, on_delete=models.CASCADE, related_name="controls")
    variant = models.CharField(
        max_length=10, choices=ControlVariant.choices, default=ControlVariant.RANDOM
    )
    rng_seed = models.IntegerField(default=0)
    items = models.JSONField(default=list)
    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        if self.variant == ControlVariant.RELAXED:
            return f"relaxed dataset of {self.evosyn_id}"
        return f"random-testing control of {self.evosyn_id} (seed {self.rng_seed})"


class Ablation(models.Model):
    """The document's ablations (Figure 4b: M x N; Table 1: K, with and without Criterion-1)
    recomputed from the campaign's stored pass matrices by sub-sampling, with one strategy and no
    model call (``evosyn.ablation``). ``cells``: one entry per (M, N, K) of the grid."""

    evosyn = models.ForeignKey(EvoSynCampaign, on_delete=models.CASCADE, related_name="ablations")
    strategy = models.ForeignKey(
        Strategy, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    strategy_label = models.CharField(max_length=80)
    code = models.TextField(help_text="the strategy program every cell ran")
    m_values = models.JSONField(default=list)
    n_values = models.JSONField(default=list)
    k_values = models.JSONField(default=list)
    stored_m = models.PositiveSmallIntegerField()
    stored_n = models.PositiveSmallIntegerField()
    replayed = models.BooleanField(
        default=False, help_text="the campaign's model answers came from a replay cassette"
    )
    cells = models.JSONField(default=list)
    sandbox_executions = models.PositiveIntegerField(default=0)
    elapsed_s = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"ablation {self.pk} of {self.evosyn_id} ({self.strategy_label})"
