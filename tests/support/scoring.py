"""Test worlds score leaderboard runs as the scoring service does (``releases.public_record``):
a run is created queued, its samples are written inside ``public_record.writing()``, and it is
completed by the service's ``leaderboard.record_completion`` while it is claimed. The database
refuses any other way to a result (migration 0013), so a fixture cannot shortcut it."""

from __future__ import annotations

from evolution import jobs
from releases import leaderboard, public_record
from releases.models import LeaderboardRun

as_scoring_service = public_record.writing


def complete(run, summary: dict | None = None):
    """``run`` completed with ``summary`` (default: ``leaderboard.run_summary`` of its samples),
    through the scoring service's own claim and completion."""
    model = type(run)
    token = jobs.claim(model, run.pk)
    assert token, f"{model.__name__} {run.pk} is not free to complete"
    if summary is None:
        summary = leaderboard.run_summary(run=run)
    assert leaderboard.record_completion(model, run.pk, token, summary=summary)
    run.refresh_from_db()
    return run


def completed_run(*, summary: dict, **fields) -> LeaderboardRun:
    """A leaderboard run created (queued) with ``fields`` and completed with ``summary``."""
    return complete(LeaderboardRun.objects.create(**fields), summary)
