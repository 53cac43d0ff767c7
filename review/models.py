"""Blinded expert review: rounds, groups, assignments, ratings, tags, adjudication.

Blinding rule: everything a reviewer can reach is keyed by the random ``opaque_id`` columns
below, never by a primary key or by anything stored on ``evolution.Problem``. Selectors in
``review/selectors.py`` are the only code that builds reviewer-facing data.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q


def new_opaque_id() -> str:
    # Random and meaningless: 12 hex chars carry no order, date, dataset or pk.
    return secrets.token_hex(6)


RATING_DIMENSIONS = ("clarity", "novelty", "difficulty", "quality")

# What each point means; shown next to every radio button on the form.
RATING_SCALES: dict[str, dict[int, str]] = {
    "clarity": {
        1: "Cannot be solved as written: ambiguous or contradictory",
        2: "Major gaps; needs guessing",
        3: "Understandable with effort; minor gaps",
        4: "Clear; small polish possible",
        5: "Crisp and complete, contest-ready",
    },
    "novelty": {
        1: "A textbook exercise or a near copy of a well-known problem",
        2: "A known problem with a cosmetic twist",
        3: "A familiar technique in a fresh setting",
        4: "A non-obvious insight is needed",
        5: "Original idea; I have not seen it before",
    },
    "difficulty": {
        1: "Trivial: direct implementation",
        2: "Easy: one standard idea",
        3: "Medium: combine standard ideas carefully",
        4: "Hard: a deep idea or a delicate proof",
        5: "Very hard: expert-level, several deep steps",
    },
    "quality": {
        1: "Should not be used",
        2: "Usable only after substantial rework",
        3: "Acceptable",
        4: "Good benchmark problem",
        5: "Excellent; would set it in a contest",
    },
}

CF_MIN, CF_MAX, CF_STEP = 800, 3500, 100

# A reasoning item (a question and a given answer) is rated on these two scales plus a verdict
# on the answer; the coding dimensions (novelty, quality, CF rating, tags) do not apply to it.
REASONING_DIMENSIONS = ("clarity", "difficulty")
REASONING_SCALES: dict[str, dict[int, str]] = {
    "clarity": {
        1: "Cannot be answered as written: ambiguous or contradictory",
        2: "Major gaps; the intended reading must be guessed",
        3: "Understandable with effort; minor gaps",
        4: "Clear; small polish possible",
        5: "Crisp, complete, exactly one intended answer",
    },
    "difficulty": {
        1: "Trivial: answered at a glance",
        2: "Easy: one short step",
        3: "Medium: a few careful steps",
        4: "Hard: a long or delicate chain of reasoning",
        5: "Very hard: expert-level, easy to get wrong",
    },
}


class GroupKind(models.TextChoices):
    CODING = "coding"
    REASONING = "reasoning"


class AnswerVerdict(models.TextChoices):
    CORRECT = "correct"
    INCORRECT = "incorrect"
    UNSURE = "unsure"


class RoundStatus(models.TextChoices):
    OPEN = "open"
    CLOSED = "closed"


class ReviewRound(models.Model):
    name = models.CharField(max_length=200)
    instructions = models.TextField(blank=True)
    reviewers_per_group = models.PositiveSmallIntegerField(default=2)
    exclude_creators = models.BooleanField(
        default=True, help_text="never assign a lineage to the person who launched its campaign"
    )
    status = models.CharField(max_length=8, choices=RoundStatus.choices, default=RoundStatus.OPEN)
    reviewers = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="review_rounds", blank=True
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(reviewers_per_group__gte=1) & Q(reviewers_per_group__lte=5),
                name="reviewround_reviewers_per_group_range",
            ),
        ]

    def __str__(self):
        return self.name


class ReviewGroup(models.Model):
    """One lineage (2-4 problems), or 2-4 reasoning items, inside a round."""

    round = models.ForeignKey(ReviewRound, on_delete=models.CASCADE, related_name="groups")
    opaque_id = models.CharField(max_length=24, unique=True, default=new_opaque_id)
    kind = models.CharField(max_length=10, choices=GroupKind.choices, default=GroupKind.CODING)
    lineage = models.ForeignKey(
        "benchevolver.Lineage", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Coding groups only; a reasoning group has no root problem.
    root_problem = models.ForeignKey(
        "evolution.Problem", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Reasoning groups: the type their items share ("" when chosen items mix types).
    reasoning_type = models.CharField(max_length=60, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["round_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["round", "root_problem"], name="reviewgroup_unique_root"
            ),
            models.CheckConstraint(
                condition=(Q(kind="coding") & Q(root_problem__isnull=False))
                | (Q(kind="reasoning") & Q(root_problem__isnull=True)),
                name="reviewgroup_kind_matches_root",
            ),
        ]

    def __str__(self):
        return f"group {self.opaque_id}"


class GroupItem(models.Model):
    """A problem or a reasoning item inside a group; reviewers know it only by ``opaque_id``.
    Exactly one of ``problem`` and ``reasoning_item`` is set."""

    group = models.ForeignKey(ReviewGroup, on_delete=models.CASCADE, related_name="items")
    problem = models.ForeignKey(
        "evolution.Problem", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reasoning_item = models.ForeignKey(
        "reasoning.ReasoningItem",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="review_items",
    )
    opaque_id = models.CharField(max_length=24, unique=True, default=new_opaque_id)
    # Lineage order (0 = seed; for reasoning items, difficulty order) for curators; reviewers
    # get a per-assignment shuffle instead.
    lineage_position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["group_id", "lineage_position"]
        constraints = [
            models.UniqueConstraint(fields=["group", "problem"], name="groupitem_unique_problem"),
            models.UniqueConstraint(
                fields=["group", "reasoning_item"], name="groupitem_unique_reasoning_item"
            ),
            models.CheckConstraint(
                condition=(Q(problem__isnull=False) & Q(reasoning_item__isnull=True))
                | (Q(problem__isnull=True) & Q(reasoning_item__isnull=False)),
                name="groupitem_problem_xor_reasoning_item",
            ),
        ]

    def __str__(self):
        return f"item {self.opaque_id}"

    @property
    def is_reasoning(self) -> bool:
        return self.reasoning_item_id is not None

    @property
    def subject_label(self) -> str:
        """What a curator calls the item: the problem's title, or what its source calls it."""
        if self.problem_id:
            return self.problem.title
        from evolution.sources import source_for_model

        item_model = type(self)._meta.get_field("reasoning_item").related_model
        return source_for_model(item_model).subject_label(self.reasoning_item)


class Assignment(models.Model):
    group = models.ForeignKey(ReviewGroup, on_delete=models.CASCADE, related_name="assignments")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="review_assignments"
    )
    opaque_id = models.CharField(max_length=24, unique=True, default=new_opaque_id)
    certified_no_ai = models.BooleanField(default=False)
    # Bumped by every save that changes the group's draft. A save or submit names the version
    # it was based on; one based on an older version is refused (two tabs or windows on one
    # group never overwrite each other silently).
    draft_version = models.PositiveIntegerField(default=0)
    # The page (a random id per page load) whose saves made every version since
    # ``draft_writer_since``: its own older base is no conflict (a save whose answer was lost,
    # a submit sent while its last save was still on the way).
    draft_writer = models.CharField(max_length=32, blank=True)
    draft_writer_since = models.PositiveIntegerField(default=0)
    opened_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["group_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["group", "reviewer"], name="assignment_once_per_reviewer"
            ),
            models.CheckConstraint(
                condition=Q(submitted_at__isnull=True) | Q(certified_no_ai=True),
                name="assignment_submitted_is_certified",
            ),
        ]

    def __str__(self):
        return f"assignment {self.opaque_id}"

    @property
    def is_submitted(self) -> bool:
        return self.submitted_at is not None


class Validity(models.TextChoices):
    VALID = "valid"
    INVALID = "invalid"
    UNSURE = "unsure"


class TagStatus(models.TextChoices):
    APPROVED = "approved"
    PROPOSED = "proposed"
    MERGED = "merged"


class Tag(models.Model):
    """Controlled vocabulary of algorithms and data structures."""

    name = models.CharField(max_length=80, unique=True)
    status = models.CharField(max_length=10, choices=TagStatus.choices, default=TagStatus.APPROVED)
    merged_into = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="merged_from"
    )
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=~Q(status="merged") | Q(merged_into__isnull=False),
                name="tag_merged_has_target",
            ),
        ]

    def __str__(self):
        return self.name


class TagSynonym(models.Model):
    """A normalized spelling ("hld") that means a tag ("heavy-light decomposition")."""

    tag = models.ForeignKey(Tag, on_delete=models.CASCADE, related_name="synonyms")
    key = models.CharField(max_length=80, unique=True)

    class Meta:
        ordering = ["key"]

    def __str__(self):
        return f"{self.key} -> {self.tag_id}"


class Review(models.Model):
    """One reviewer's rating of one problem. A draft until ``submitted_at`` is set."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="reviews")
    item = models.ForeignKey(GroupItem, on_delete=models.CASCADE, related_name="reviews")
    # Per-reviewer shuffled position of the item inside the group.
    position = models.PositiveSmallIntegerField()
    clarity = models.PositiveSmallIntegerField(null=True, blank=True)
    novelty = models.PositiveSmallIntegerField(null=True, blank=True)
    difficulty = models.PositiveSmallIntegerField(null=True, blank=True)
    quality = models.PositiveSmallIntegerField(null=True, blank=True)
    validity = models.CharField(max_length=8, choices=Validity.choices, blank=True)
    validity_reason = models.TextField(blank=True)
    # Reasoning items: is the given answer correct? (The justification says why.)
    answer_verdict = models.CharField(max_length=10, choices=AnswerVerdict.choices, blank=True)
    cf_rating = models.PositiveSmallIntegerField(null=True, blank=True)
    tags = models.ManyToManyField(Tag, related_name="reviews", blank=True)
    # Raw tag text as typed, kept while drafting so nothing typed is lost.
    tags_text = models.CharField(max_length=1000, blank=True)
    justification = models.TextField(blank=True)
    # Active seconds on this problem (measured in the page; wall-clock share without JS).
    seconds_spent = models.FloatField(default=0)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["assignment_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "item"], name="review_once_per_item"),
            models.UniqueConstraint(
                fields=["assignment", "position"], name="review_unique_position"
            ),
            *[
                models.CheckConstraint(
                    condition=Q(**{f"{d}__isnull": True})
                    | (Q(**{f"{d}__gte": 1}) & Q(**{f"{d}__lte": 5})),
                    name=f"review_{d}_range",
                )
                for d in RATING_DIMENSIONS
            ],
            models.CheckConstraint(
                condition=Q(cf_rating__isnull=True)
                | (Q(cf_rating__gte=CF_MIN) & Q(cf_rating__lte=CF_MAX)),
                name="review_cf_rating_range",
            ),
        ]

    def __str__(self):
        return f"review {self.pk} of {self.item_id}"


class AdjudicationStatus(models.TextChoices):
    OPEN = "open"
    RESOLVED = "resolved"


class Adjudication(models.Model):
    """A disagreement the curator must settle: ratings 2+ apart, or conflicting validity."""

    item = models.ForeignKey(GroupItem, on_delete=models.CASCADE, related_name="adjudications")
    # a rating dimension, "validity", or "answer" (reasoning items' answer verdicts conflict)
    dimension = models.CharField(max_length=12)
    detail = models.CharField(max_length=300)
    status = models.CharField(
        max_length=8, choices=AdjudicationStatus.choices, default=AdjudicationStatus.OPEN
    )
    resolution = models.TextField(blank=True)
    resolved_value = models.CharField(max_length=12, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item_id", "dimension"]
        constraints = [
            models.UniqueConstraint(fields=["item", "dimension"], name="adjudication_unique"),
        ]

    def __str__(self):
        return f"{self.dimension} on {self.item_id} ({self.status})"


class ScoreOverride(models.Model):
    """A curator's replacement for an aggregated score, with the reason (newest wins)."""

    item = models.ForeignKey(GroupItem, on_delete=models.CASCADE, related_name="overrides")
    # rating dimension, "cf_rating", "validity", or "answer" (a reasoning item's correctness,
    # which also replaced the judges' score in the campaign's EMA)
    dimension = models.CharField(max_length=12)
    value = models.CharField(max_length=12)
    reason = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item_id", "dimension", "-created_at", "-id"]

    def __str__(self):
        return f"{self.dimension}={self.value} on {self.item_id}"
