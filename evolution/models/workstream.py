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
