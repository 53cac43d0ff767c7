"""The abstract row every kind's stream of work inherits (``Lineage``, ``ReasoningCampaign``,
``XcoderCampaign``, ``EvoSynCampaign``, ``FrontierCampaign``); the runner in
``evolution.streams`` advances it."""

from __future__ import annotations

from django.db import models


class WorkStream(models.Model):
    """One sequence of steps that a single worker at a time advances.

    A step claims the row with a conditional UPDATE (``lease_token`` / ``leased_until``); a
    worker killed while holding the lease blocks the row only until it expires. Exactly one step
    message is live per row: a message whose ``ticket`` is not the current one is a stale
    duplicate and does nothing. ``ticket_chain`` is the campaign tick chain the ticket was issued
    under, so a new chain (resume, worker restart) re-issues it and older messages stay stale.
    """

    lease_token = models.CharField(max_length=40, blank=True)
    leased_until = models.DateTimeField(null=True, blank=True)
    ticket = models.CharField(max_length=40, blank=True)
    ticket_issued_at = models.DateTimeField(null=True, blank=True)
    ticket_chain = models.CharField(max_length=40, blank=True)
    steps_done = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    consecutive_errors = models.PositiveSmallIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class StepFailure(models.Model):
    """One failed step of any kind's stream, with its traceback: what the workers page lists.

    The runner records every failure it counts (``evolution.streams.runner._record_error``),
    with what the failure policy did about it; only the newest ``KEEP`` rows are kept."""

    KEEP = 500

    class Consequence(models.TextChoices):
        RETRIED = "retried", "will be retried"
        PAUSED = "paused", "paused the campaign (infrastructure)"
        GAVE_UP = "gave_up", "gave up on the item"
        STREAM_FAILED = "stream_failed", "failed the stream"
        CAMPAIGN_FAILED = "campaign_failed", "failed the campaign"

    campaign = models.ForeignKey(
        "evolution.Campaign", on_delete=models.CASCADE, related_name="step_failures"
    )
    kind = models.CharField(max_length=20)
    stream_id = models.PositiveBigIntegerField()
    action = models.CharField(max_length=60)
    error = models.TextField()
    traceback = models.TextField(blank=True)
    infrastructure = models.BooleanField(default=False)
    attempt = models.PositiveSmallIntegerField(default=1)
    consequence = models.CharField(
        max_length=20, choices=Consequence.choices, default=Consequence.RETRIED
    )
    # The Celery worker that ran the step ("" for the in-process runner).
    worker = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["campaign", "-id"], name="stepfailure_campaign_recent")]

    def __str__(self):
        return f"{self.kind} stream {self.stream_id}: {self.action} ({self.consequence})"
