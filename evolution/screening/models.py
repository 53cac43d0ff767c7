"""The similarity index of the public corpora, and each screened problem's nearest public
problems."""

from __future__ import annotations

from django.db import models


class IndexedProblem(models.Model):
    """A public problem (a seed an importer created) in the similarity index: the MinHash
    signatures of its statement and of its reference solution (``None`` without one), each
    ``NUM_PERM`` little-endian uint32 values, and what the screen reports about it."""

    problem = models.OneToOneField(
        "evolution.Problem", on_delete=models.CASCADE, related_name="screen_index"
    )
    origin_dataset = models.CharField(max_length=60)
    origin_id = models.CharField(max_length=200, blank=True)
    # When the problem became public: the contest date, or the date a record carries (TACO).
    published_on = models.DateField(null=True, blank=True)
    statement_signature = models.BinaryField()
    code_signature = models.BinaryField(null=True, blank=True)
    statement_shingles = models.PositiveIntegerField(default=0)
    code_shingles = models.PositiveIntegerField(default=0)
    # sha256 of what was hashed and how (``signatures.SCHEME``): an unchanged problem is skipped.
    digest = models.CharField(max_length=64)
    indexed_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["origin_dataset"])]

    def __str__(self):
        return f"{self.origin_dataset} {self.origin_id or self.problem_id}"


class ProblemScreen(models.Model):
    """The latest screen of one problem against the index: its nearest public problems (its own
    lineage apart), in the form ``services.screen_record`` documents."""

    problem = models.OneToOneField(
        "evolution.Problem", on_delete=models.CASCADE, related_name="screen"
    )
    record = models.JSONField(default=dict)
    max_similarity = models.FloatField(null=True, blank=True)
    # The index as it was when screened (``index.IndexState.version``): a screen whose version
    # is not the index's current one is screened again before the gate reads it.
    index_version = models.CharField(max_length=80)
    # Where it was screened: "benchevolver", "measurement", "gate", "command".
    context = models.CharField(max_length=20)
    screened_at = models.DateTimeField()

    class Meta:
        ordering = ["problem_id"]

    def __str__(self):
        return f"screen of problem {self.problem_id}: {self.max_similarity}"
