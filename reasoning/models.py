"""Reasoning-question campaigns (design document 004) as a second campaign kind.

The evolution ``Campaign`` row carries the lifecycle, budget and tick chain; ``ReasoningCampaign``
adds the three role endpoints, the judges, the run state of section 6.1 and the lease that
claims the campaign's one sequential stream of work. Items are the document's ExampleResult;
``ResultLogEntry`` is the append-only log (runs.jsonl).

``ReasoningSeries`` is the benchmark that outlives one campaign, as the document's
``out_benchmark/`` directory outlives one invocation (section 9): its state (the document's
state.json), the run numbers and the prior questions every campaign of the series continues;
``ImportedExample`` holds the ExampleResults of runs made outside BenchForge (a runs.jsonl
imported into the series).
"""

from __future__ import annotations

from django.conf import settings as django_settings
from django.db import models
from django.db.models import Q

from evolution.streams.models import WorkStream


class ReasoningSeries(models.Model):
    """A benchmark continued across campaigns (design document 004, sections 6.1 and 9).

    Its state is the document's RunState: every save point of any of its campaigns (a level
    closed, a run finished) writes it in the same transaction as the campaign's own copy, and a
    new campaign of the series starts from it. One campaign writes the series at a time
    (``holder``): a second one cannot start a run while the holder is queued, running or
    paused."""

    name = models.CharField(max_length=200, unique=True)
    slug = models.SlugField(max_length=80, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    # --- RunState (section 6.1): the document's state.json ---------------------------------
    ema = models.FloatField(null=True, blank=True)
    run_count = models.PositiveIntegerField(default=0)
    current_difficulty = models.PositiveSmallIntegerField(default=1)
    ema_by_reasoning_type = models.JSONField(default=dict, blank=True)
    ema_by_difficulty = models.JSONField(default=dict, blank=True)
    state_saved_at = models.DateTimeField(null=True, blank=True)
    # The state a state.json import gave the series before any of its BenchForge runs: the
    # start of the EMA fold when an override makes the series recompute its state.
    base_state = models.JSONField(default=dict, blank=True)
    # The campaign writing the series now (None: none has started, or the last one finished).
    holder = models.ForeignKey(
        "ReasoningCampaign",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "reasoning series"
        constraints = [
            models.CheckConstraint(
                condition=Q(current_difficulty__gte=1) & Q(current_difficulty__lte=10),
                name="reasoningseries_current_difficulty_range",
            ),
        ]

    def __str__(self):
        return self.name


class ReasoningCampaign(WorkStream):
    campaign = models.OneToOneField(
        "evolution.Campaign", primary_key=True, on_delete=models.CASCADE, related_name="reasoning"
    )
    generation_endpoint = models.ForeignKey(
        "evolution.ModelEndpoint", on_delete=models.PROTECT, related_name="+"
    )
    answering_endpoint = models.ForeignKey(
        "evolution.ModelEndpoint", on_delete=models.PROTECT, related_name="+"
    )
    # The quality filter's model; None means the first judge.
    quality_endpoint = models.ForeignKey(
        "evolution.ModelEndpoint",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )

    # The benchmark this campaign continues; its state below is the series' state as of this
    # campaign's last save point, ``series_start`` the series' state when it took the series.
    series = models.ForeignKey(ReasoningSeries, on_delete=models.PROTECT, related_name="campaigns")
    series_start = models.JSONField(default=dict, blank=True)

    # --- RunState (section 6.1), saved after each difficulty level --------------------------
    ema = models.FloatField(null=True, blank=True)
    run_count = models.PositiveIntegerField(default=0)
    current_difficulty = models.PositiveSmallIntegerField(default=1)
    ema_by_reasoning_type = models.JSONField(default=dict, blank=True)
    ema_by_difficulty = models.JSONField(default=dict, blank=True)
    state_saved_at = models.DateTimeField(null=True, blank=True)

    # Claimed as one WorkStream (lease, ticket, errors): the loop is sequential, each question
    # is conditioned on the ones before it.

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(current_difficulty__gte=1) & Q(current_difficulty__lte=10),
                name="reasoning_current_difficulty_range",
            ),
        ]

    def __str__(self):
        return f"reasoning settings of campaign {self.campaign_id}"


class JudgeSeat(models.Model):
    """One evaluation model of the campaign; several seats form the ensemble."""

    reasoning = models.ForeignKey(ReasoningCampaign, on_delete=models.CASCADE, related_name="seats")
    endpoint = models.ForeignKey(
        "evolution.ModelEndpoint", on_delete=models.PROTECT, related_name="+"
    )
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["reasoning_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["reasoning", "position"], name="judgeseat_position"),
            models.UniqueConstraint(fields=["reasoning", "endpoint"], name="judgeseat_endpoint"),
        ]

    def __str__(self):
        return f"judge {self.position} of {self.reasoning_id}"


class RunStatus(models.TextChoices):
    RUNNING = "running"
    COMPLETED = "completed"


class ReasoningRun(models.Model):
    reasoning = models.ForeignKey(ReasoningCampaign, on_delete=models.CASCADE, related_name="runs")
    series = models.ForeignKey(ReasoningSeries, on_delete=models.CASCADE, related_name="runs")
    number = models.PositiveIntegerField(help_text="1-based, in series order")
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.RUNNING)
    # [{"name", "questions", "weak"}] fixed when the run starts (weak-area focus decides it).
    plan = models.JSONField(default=list, blank=True)
    # Closed levels in order: [{"difficulty", "score", "ema", "next", "reason"}]
    levels = models.JSONField(default=list, blank=True)
    score = models.FloatField(null=True, blank=True)
    type_scores = models.JSONField(default=dict, blank=True)
    stop_reason = models.CharField(max_length=300, blank=True)
    # The run state right after this run (the EMA-over-runs chart reads these).
    ema_after = models.FloatField(null=True, blank=True)
    ema_by_type_after = models.JSONField(default=dict, blank=True)
    ema_by_difficulty_after = models.JSONField(default=dict, blank=True)
    report = models.TextField(blank=True, help_text="Markdown report, written when the run ends")
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["reasoning_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["reasoning", "number"], name="reasoningrun_number"),
            # Run numbers continue across the campaigns of a series, never twice.
            models.UniqueConstraint(fields=["series", "number"], name="reasoningrun_series_number"),
            # One run in progress per campaign: a rerun of "start a run" cannot make two.
            models.UniqueConstraint(
                fields=["reasoning"],
                condition=Q(status="running"),
                name="reasoningrun_one_running",
            ),
        ]

    def __str__(self):
        return f"run {self.number} of campaign {self.reasoning_id}"


class ItemStatus(models.TextChoices):
    GENERATED = "generated"  # question accepted, waiting for the answer
    ANSWERED = "answered"  # waiting for the judges
    JUDGED = "judged"  # scored
    FILTERED = "filtered"  # no acceptable question within the regeneration bound: not scored
    ERROR = "error"  # a model kept failing on this item: not scored


class ReasoningItem(models.Model):
    """The document's ExampleResult (section 6.2), plus how it was made and judged."""

    run = models.ForeignKey(ReasoningRun, on_delete=models.CASCADE, related_name="items")
    reasoning = models.ForeignKey(ReasoningCampaign, on_delete=models.CASCADE, related_name="items")
    reasoning_type = models.CharField(max_length=60)
    difficulty = models.PositiveSmallIntegerField()
    question_index = models.PositiveSmallIntegerField()
    position = models.PositiveIntegerField(help_text="round-robin position within the run")
    status = models.CharField(max_length=10, choices=ItemStatus.choices)
    status_reason = models.TextField(blank=True)

    question = models.TextField(blank=True)
    answer = models.TextField(blank=True)
    judge_score = models.FloatField(null=True, blank=True)
    rationale = models.TextField(blank=True)
    # [{"judge", "score", "rationale", "parse_failure", "reason"}] one per judge seat
    verdicts = models.JSONField(default=list, blank=True)
    parse_failures = models.PositiveSmallIntegerField(default=0)
    disagreement = models.BooleanField(default=False)

    # Measured novelty: the highest similarity to a prior question, and which one.
    similarity = models.FloatField(null=True, blank=True)
    similar_to = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    regenerations = models.PositiveSmallIntegerField(default=0)
    # Rejected drafts: [{"question", "reason", "similarity", "similar_to"}]
    rejected_drafts = models.JSONField(default=list, blank=True)
    quality = models.JSONField(default=dict, blank=True)

    # Human-in-the-loop (section 12): replaces the judge score in every EMA.
    override_score = models.FloatField(null=True, blank=True)
    override_reason = models.TextField(blank=True)
    override_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    override_at = models.DateTimeField(null=True, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    judged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "reasoning_type", "difficulty", "question_index"],
                name="reasoningitem_unique_cell_index",
            ),
            models.CheckConstraint(
                condition=Q(judge_score__isnull=True)
                | (Q(judge_score__gte=0) & Q(judge_score__lte=1)),
                name="reasoningitem_score_range",
            ),
            models.CheckConstraint(
                condition=Q(override_score__isnull=True) | Q(override_score__in=[0.0, 1.0]),
                name="reasoningitem_override_binary",
            ),
        ]
        indexes = [models.Index(fields=["reasoning", "reasoning_type", "difficulty"])]

    def __str__(self):
        return (
            f"{self.reasoning_type} d{self.difficulty} #{self.question_index} (run {self.run_id})"
        )

    @property
    def score(self) -> float | None:
        """The score every EMA uses: a human override wins over the judges."""
        if self.status != ItemStatus.JUDGED:
            return None
        return self.override_score if self.override_score is not None else self.judge_score

    @property
    def is_overridden(self) -> bool:
        return self.override_score is not None


class ImportedExample(models.Model):
    """An ExampleResult (section 6.2) of a run made outside BenchForge, imported from the
    document's runs.jsonl into a series: a prior question of its type for the novelty focus
    (section 4.2), and part of the series' history and export. Never scored again."""

    series = models.ForeignKey(ReasoningSeries, on_delete=models.CASCADE, related_name="imported")
    run_number = models.PositiveIntegerField(null=True, blank=True)
    reasoning_type = models.CharField(max_length=60)
    difficulty = models.PositiveSmallIntegerField()
    question_index = models.PositiveSmallIntegerField(default=0)
    question = models.TextField()
    answer = models.TextField(blank=True)
    score = models.FloatField(null=True, blank=True)
    rationale = models.TextField(blank=True)
    created_at = models.CharField(max_length=64, blank=True, help_text="as the file gives it")
    # Everything else the line held, kept for the export.
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["series_id", "id"]
        indexes = [models.Index(fields=["series", "reasoning_type"])]

    def __str__(self):
        return f"imported {self.reasoning_type} d{self.difficulty} ({self.series_id})"


class ResultLogEntry(models.Model):
    """Append-only log of what happened (items scored, levels closed, runs finished, human
    overrides): the document's runs.jsonl. Rows are never updated."""

    reasoning = models.ForeignKey(ReasoningCampaign, on_delete=models.CASCADE, related_name="log")
    run = models.ForeignKey(
        ReasoningRun, null=True, blank=True, on_delete=models.CASCADE, related_name="log"
    )
    item = models.ForeignKey(
        ReasoningItem, null=True, blank=True, on_delete=models.CASCADE, related_name="log"
    )
    event = models.CharField(max_length=30)
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return f"{self.event} ({self.created_at:%Y-%m-%d %H:%M:%S})"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("the result log is append-only: entries are never changed")
        super().save(*args, **kwargs)
