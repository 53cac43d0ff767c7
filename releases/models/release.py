"""Benchmarks, their versioned releases, the curation gate, errata and the leaderboard.

Immutability: a release's items and tests are SNAPSHOTS (``ReleaseItem`` / ``ReleaseTest``),
not links to the living ``evolution.Problem`` rows, so fixing a problem later never changes
a frozen release. Once a release leaves "draft", its snapshot rows refuse every INSERT,
UPDATE and DELETE twice over: the ``save()`` / ``delete()`` guards below, and database
triggers created by migration 0002 (PostgreSQL and SQLite) for code that bypasses models
(``QuerySet.update``, raw SQL, admin bulk actions). What a published release shows beyond
its snapshot (leaderboard results, errata) is append-only the same way (migrations 0004 and
0013, ``releases.public_record``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from evolution.models.fields import pack_text, unpack_text
from evolution.models.jobs import SupervisedJob


class FrozenReleaseError(Exception):
    """A write touched a release that is no longer a draft."""


class ReleaseState(models.TextChoices):
    DRAFT = "draft"
    FROZEN = "frozen"
    PUBLISHED = "published"


class Benchmark(models.Model):
    name = models.CharField(max_length=120, unique=True, help_text='e.g. "LiveCodeBench-Plus"')
    slug = models.SlugField(max_length=120, unique=True)
    description = models.TextField(blank=True)
    license = models.CharField(max_length=60, default="cc-by-4.0")
    # Rule overrides applied to every new release (see releases.gate.GateRules).
    default_rules = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Release(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="releases")
    major = models.PositiveIntegerField(default=1)
    minor = models.PositiveIntegerField(default=0)
    patch = models.PositiveIntegerField(default=0)
    state = models.CharField(
        max_length=10, choices=ReleaseState.choices, default=ReleaseState.DRAFT
    )
    notes = models.TextField(blank=True, help_text="Markdown shown on the release card")
    # The gate's rules for this release (complete, validated; see releases.gate.GateRules).
    gate_rules = models.JSONField(default=dict, blank=True)
    # Where the gate's candidates come from.
    campaigns = models.ManyToManyField("evolution.Campaign", related_name="+", blank=True)
    problem_sets = models.ManyToManyField("evolution.ProblemSet", related_name="+", blank=True)
    previous = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="successors"
    )
    content_hash = models.CharField(max_length=64, blank=True)
    # How content_hash was computed (releases.content): "benchforge-release/2" for every
    # release frozen since that format; empty (NULL) for releases frozen before it, whose
    # hash is format 1 and stays verifiable as such.
    hash_format = models.CharField(max_length=40, null=True, blank=True)
    item_count = models.PositiveIntegerField(default=0)
    test_count = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    frozen_at = models.DateTimeField(null=True, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["benchmark_id", "-major", "-minor", "-patch"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "major", "minor", "patch"], name="release_unique_version"
            ),
            models.CheckConstraint(
                condition=Q(state__in=["draft", "frozen", "published"]),
                name="release_state_valid",
            ),
            models.CheckConstraint(
                condition=Q(state="draft") | (~Q(content_hash="") & Q(frozen_at__isnull=False)),
                name="release_frozen_has_hash",
            ),
            models.CheckConstraint(
                condition=~Q(state="published") | Q(published_at__isnull=False),
                name="release_published_has_date",
            ),
        ]

    def __str__(self):
        return f"{self.benchmark.name} v{self.version}"

    # Columns that may still change once frozen: only the frozen -> published step.
    _MUTABLE_WHEN_FROZEN = frozenset({"state", "published_at"})

    def save(self, *args, **kwargs):
        if self.pk is not None:
            stored = (
                Release.objects.filter(pk=self.pk)
                .values(*[f.attname for f in self._meta.concrete_fields])
                .first()
            )
            if stored is not None and stored["state"] != ReleaseState.DRAFT:
                changed = {
                    f.attname
                    for f in self._meta.concrete_fields
                    if getattr(self, f.attname) != stored[f.attname]
                }
                if changed - self._MUTABLE_WHEN_FROZEN or self.state == ReleaseState.DRAFT:
                    raise FrozenReleaseError(
                        f"v{self.version} is {stored['state']}: only publishing may change it "
                        f"(tried to change {', '.join(sorted(changed)) or 'state'})"
                    )
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if Release.objects.filter(pk=self.pk).exclude(state=ReleaseState.DRAFT).exists():
            raise FrozenReleaseError(f"v{self.version} is frozen and cannot be deleted")
        return super().delete(*args, **kwargs)

    @property
    def version(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    @property
    def version_key(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    @property
    def is_draft(self) -> bool:
        return self.state == ReleaseState.DRAFT

    @property
    def is_published(self) -> bool:
        return self.state == ReleaseState.PUBLISHED


def _release_is_draft(release_id: int | None) -> bool:
    if release_id is None:
        return True
    state = Release.objects.filter(pk=release_id).values_list("state", flat=True).first()
    return state in (None, ReleaseState.DRAFT)


class Origin(models.TextChoices):
    EVOLVED = "evolved"
    ORIGINAL = "original"


class ReleaseItem(models.Model):
    """One problem as the release froze it. ``record`` holds the problem's columns in the
    ``benchforge-problem/1`` form (without tests); ``provenance`` how it got here."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="items")
    problem = models.ForeignKey("evolution.Problem", on_delete=models.PROTECT, related_name="+")
    position = models.PositiveIntegerField()
    public_id = models.CharField(max_length=24)
    title = models.CharField(max_length=300)
    origin = models.CharField(max_length=10, choices=Origin.choices)
    difficulty = models.CharField(max_length=30, blank=True)
    tags = models.JSONField(default=list, blank=True)
    record = models.JSONField(default=dict)
    # Lineage, validation ledger, panel results, review aggregate, gate outcome.
    provenance = models.JSONField(default=dict, blank=True)
    # When the task came into existence (contest date for originals): contamination windows.
    created_on = models.DateTimeField(null=True, blank=True)
    content_hash = models.CharField(max_length=64)
    # The gate's verdict and, when the curator went against it, why.
    gate_passed = models.BooleanField(default=True)
    curator_note = models.TextField(blank=True)

    class Meta:
        ordering = ["release_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["release", "public_id"], name="releaseitem_unique_id"),
            models.UniqueConstraint(
                fields=["release", "position"], name="releaseitem_unique_position"
            ),
        ]

    def __str__(self):
        return f"{self.public_id} in release {self.release_id}"

    def save(self, *args, **kwargs):
        if not _release_is_draft(self.release_id):
            raise FrozenReleaseError("items of a frozen release cannot change")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if not _release_is_draft(self.release_id):
            raise FrozenReleaseError("items of a frozen release cannot be removed")
        return super().delete(*args, **kwargs)


class ReleaseTest(models.Model):
    __test__ = False  # not a pytest class

    item = models.ForeignKey(ReleaseItem, on_delete=models.CASCADE, related_name="tests")
    tier = models.CharField(max_length=10)
    ordinal = models.PositiveIntegerField()
    hidden = models.BooleanField(default=True)
    input_text = models.TextField(blank=True)
    input_blob = models.BinaryField(null=True, blank=True)
    output_text = models.TextField(blank=True)
    output_blob = models.BinaryField(null=True, blank=True)
    provenance = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["item_id", "tier", "ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "tier", "ordinal"], name="releasetest_unique_position"
            ),
            models.CheckConstraint(
                condition=~Q(tier="public") | Q(hidden=False), name="releasetest_public_not_hidden"
            ),
        ]

    def __str__(self):
        return f"{self.item_id} {self.tier}#{self.ordinal}"

    def save(self, *args, **kwargs):
        if not _release_is_draft(self._release_id()):
            raise FrozenReleaseError("tests of a frozen release cannot change")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if not _release_is_draft(self._release_id()):
            raise FrozenReleaseError("tests of a frozen release cannot be removed")
        return super().delete(*args, **kwargs)

    def _release_id(self) -> int | None:
        return (
            ReleaseItem.objects.filter(pk=self.item_id).values_list("release_id", flat=True).first()
        )

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


class ReleaseQuestion(models.Model):
    """A reasoning item (question and reference answer) in a release.

    While the release is a draft these rows are the curator's selection; ``release_freeze``
    re-snapshots each from its living ``reasoning.ReasoningItem`` (so a later override or fix
    never changes a frozen release), hashes it and from then on the row is immutable like a
    ``ReleaseItem`` (model guards and database triggers, migration 0004). The reference
    answer is the question's hidden test: it never appears on a public page.
    """

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="questions")
    reasoning_item = models.ForeignKey(
        "reasoning.ReasoningItem", on_delete=models.PROTECT, related_name="+"
    )
    position = models.PositiveIntegerField()
    public_id = models.CharField(max_length=24)
    reasoning_type = models.CharField(max_length=60)
    difficulty = models.PositiveSmallIntegerField()
    question = models.TextField()
    reference_answer = models.TextField()
    # The canonical content (releases.content.question_content_record) the hash is taken of.
    record = models.JSONField(default=dict)
    # Campaign, run, judge score, human override, when it was selected.
    provenance = models.JSONField(default=dict, blank=True)
    content_hash = models.CharField(max_length=64, blank=True)
    curator_note = models.TextField(blank=True)

    class Meta:
        ordering = ["release_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["release", "public_id"], name="releasequestion_unique_id"
            ),
            models.UniqueConstraint(
                fields=["release", "reasoning_item"], name="releasequestion_unique_item"
            ),
        ]

    def __str__(self):
        return f"{self.public_id} in release {self.release_id}"

    def save(self, *args, **kwargs):
        if not _release_is_draft(self.release_id):
            raise FrozenReleaseError("questions of a frozen release cannot change")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if not _release_is_draft(self.release_id):
            raise FrozenReleaseError("questions of a frozen release cannot be removed")
        return super().delete(*args, **kwargs)


class GateRun(models.Model):
    """One evaluation of the gate over a draft's candidates: the full report is kept."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="gate_runs")
    rules = models.JSONField(default=dict)
    # [{"problem_id", "public_id", "title", "origin", "passed", "facts", "rules": [...]}]
    report = models.JSONField(default=list)
    # {problem id: where its panel figure came from, as the kind that measured it said when the
    # gate ran (``PanelFacts.provenance``: the campaign and candidate, the seed calibration or
    # the shared panel measurement; the validation ledger; per-model results)}, what freeze
    # publishes beside the figure. None: a run from before runs kept it.
    provenance = models.JSONField(null=True, blank=True, default=None)
    candidates = models.PositiveIntegerField(default=0)
    passed = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["release_id", "-created_at", "-id"]

    def __str__(self):
        return f"gate run {self.pk}: {self.passed}/{self.candidates}"


class CurationDecision(models.Model):
    """A curator including or excluding a candidate against the gate; newest wins."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="decisions")
    problem = models.ForeignKey("evolution.Problem", on_delete=models.PROTECT, related_name="+")
    include = models.BooleanField()
    justification = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["release_id", "problem_id", "-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=~Q(justification=""), name="curationdecision_has_justification"
            ),
        ]

    def __str__(self):
        return f"{'include' if self.include else 'exclude'} {self.problem_id}"


class ErratumKind(models.TextChoices):
    TESTS = "tests", "wrong or missing tests"
    STATEMENT = "statement", "statement wrong or ambiguous"
    REFERENCE = "reference", "reference solution wrong"
    OTHER = "other", "other"


class Erratum(models.Model):
    """A defect found in a frozen release's item. Fixed by a later version of the benchmark:
    freezing that version records it in ``fixed_in`` (changed or removed item).

    Append-only (migration 0013, ``releases.public_record``): recorded open and signed by the
    curator (``signed_by``, ``created_by``, ``created_at``), never edited or deleted; a
    correction is a new erratum. Only freezing the version that fixes it sets ``fixed_in``."""

    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="errata")
    item_public_id = models.CharField(max_length=24)
    kind = models.CharField(max_length=10, choices=ErratumKind.choices)
    description = models.TextField()
    fixed_in = models.ForeignKey(
        Release, null=True, blank=True, on_delete=models.SET_NULL, related_name="fixed_errata"
    )
    resolution = models.CharField(max_length=20, blank=True)  # "changed" | "removed"
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The signature: who recorded it (kept when the account goes), and when (created_at).
    signed_by = models.CharField(
        max_length=150, blank=True, help_text="the username of the curator who recorded it"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["release_id", "created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=~Q(description=""), name="erratum_has_description"),
        ]

    def __str__(self):
        return f"erratum {self.pk} on {self.item_public_id}"


class RunState(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


class RunSource(models.TextChoices):
    ENDPOINT = "endpoint", "model endpoint"
    UPLOAD = "upload", "uploaded solutions (JSONL)"


class LeaderboardRun(SupervisedJob):
    """A model evaluated on a frozen release: n samples per item, judged on all its tests.

    Part of the public record (migration 0013, ``releases.public_record``): created queued;
    only the scoring service writes its samples and completes it (from running); a completed
    run and its samples never change, and a failed one is run again, never edited."""

    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="runs")
    endpoint = models.ForeignKey(
        "evolution.ModelEndpoint", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    source = models.CharField(max_length=10, choices=RunSource.choices, default=RunSource.ENDPOINT)
    label = models.CharField(max_length=200, help_text="the model's name on the leaderboard")
    model_release_date = models.DateField(null=True, blank=True)
    samples_per_problem = models.PositiveSmallIntegerField(default=4)
    bootstrap_seed = models.PositiveIntegerField(default=0)
    state = models.CharField(max_length=10, choices=RunState.choices, default=RunState.QUEUED)
    error = models.TextField(blank=True)
    # Computed when the run completes (releases.leaderboard.run_summary).
    summary = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta(SupervisedJob.Meta):
        ordering = ["release_id", "-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(samples_per_problem__gte=1) & Q(samples_per_problem__lte=100),
                name="leaderboardrun_samples_range",
            ),
            models.CheckConstraint(
                condition=Q(source="upload") | Q(endpoint__isnull=False),
                name="leaderboardrun_endpoint_needs_endpoint",
            ),
        ]

    def __str__(self):
        return f"{self.label} on release {self.release_id}"


class LeaderboardRunFigures(models.Model):
    """What the public leaderboard reads of a completed run, stored apart from its summary
    (``releases.leaderboard.board.figures_of``): ``summary`` is the run's summary without its rows per
    problem (pass@k, breakdowns, contamination, Avg@k and Best@k; None when the stored summary
    is unreadable: the row shows "result unavailable"), ``problems`` the few per-problem values
    a date window is computed from, as arrays in the summary's problem order. The run's
    summary stays its whole record (the run page and the living benchmark read its rows); the
    plain board reads ``summary`` here only, a window ``problems`` too.

    Written by the scoring service in the transaction that completes the run and, like its
    samples, never once the run completed (migration 0015)."""

    run = models.OneToOneField(
        LeaderboardRun, primary_key=True, on_delete=models.CASCADE, related_name="figures"
    )
    summary = models.JSONField(null=True, blank=True)
    problems = models.JSONField(null=True, blank=True)

    def __str__(self):
        return f"figures of run {self.run_id}"


class LeaderboardSample(models.Model):
    """One judged solution; unique per (run, item, sample) so a redelivered task never
    duplicates work."""

    run = models.ForeignKey(LeaderboardRun, on_delete=models.CASCADE, related_name="samples")
    item = models.ForeignKey(ReleaseItem, on_delete=models.PROTECT, related_name="+")
    sample_index = models.PositiveSmallIntegerField()
    code = models.TextField(blank=True)
    verdict = models.CharField(max_length=4)
    passed_tests = models.PositiveIntegerField(default=0)
    total_tests = models.PositiveIntegerField(default=0)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run_id", "item_id", "sample_index"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "item", "sample_index"], name="leaderboardsample_unique"
            ),
        ]

    def __str__(self):
        return f"{self.run_id}/{self.item_id}#{self.sample_index}: {self.verdict}"

    @property
    def passed(self) -> bool:
        return self.verdict == "AC"
