"""The fields every supervised background job carries (releases' leaderboard runs, independent
evaluations, re-measurements and question runs; benchapp's seed imports): when its task message
was last sent, which execution holds it and when that execution last showed it was alive, how
many executions died holding it, and what the supervisor did about it (``evolution.jobs``)."""

from __future__ import annotations

from django.db import models


class SupervisedJob(models.Model):
    # When its task message was last published (on commit, then again by the supervisor while
    # the row stays queued).
    sent_at = models.DateTimeField(null=True, blank=True)
    # The execution that holds the row (a random token set when it claims the row) and its
    # heartbeat, written every JOB_HEARTBEAT_SECONDS while it runs.
    claim = models.CharField(max_length=32, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Executions that stopped heartbeating while they held the row (a killed worker).
    lost_workers = models.PositiveSmallIntegerField(default=0)
    # The supervisor's last action on the row, shown on its page.
    recovery = models.CharField(max_length=300, blank=True)

    class Meta:
        abstract = True
