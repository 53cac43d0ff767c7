"""Releases' supervised jobs, registered with the platform's one job machinery
(``evolution.jobs``: claim, heartbeat, re-send, take back, run again) when the app starts:
leaderboard runs, independent evaluations, re-measurements and question runs.

Leaderboard runs that belong to a queued or running re-measurement are left to it: the
re-measurement executes them (taking over a run whose holder died), so they get no message of
their own; running a failed re-measurement again resets its failed runs with it.
"""

from __future__ import annotations

from evolution.jobs import FAILED, QUEUED, RUNNING, Job, register

from .models import GateEvaluation, LeaderboardRun, QuestionRun, Remeasurement


def _runs_outside_remeasurements(rows):
    inside = Remeasurement.runs.through.objects.filter(
        remeasurement__state__in=[QUEUED, RUNNING]
    ).values("leaderboardrun_id")
    return rows.exclude(pk__in=inside)


def _reset_failed_runs(remeasurement_id: int, fields: dict) -> None:
    inside = Remeasurement.runs.through.objects.filter(remeasurement_id=remeasurement_id)
    LeaderboardRun.objects.filter(pk__in=inside.values("leaderboardrun_id"), state=FAILED).update(
        **fields
    )


LEADERBOARD_RUN = Job(
    "leaderboard run",
    LeaderboardRun,
    "releases.tasks.leaderboard_run",
    queued_alone=_runs_outside_remeasurements,
)
INDEPENDENT_EVALUATION = Job(
    "independent evaluation", GateEvaluation, "releases.tasks.gate_evaluation_run"
)
REMEASUREMENT = Job(
    "re-measurement",
    Remeasurement,
    "releases.tasks.remeasurement_run",
    run_again_also=_reset_failed_runs,
)
QUESTION_RUN = Job("question run", QuestionRun, "releases.tasks.question_run")
JOBS = (LEADERBOARD_RUN, INDEPENDENT_EVALUATION, REMEASUREMENT, QUESTION_RUN)


def register_jobs() -> None:
    """Called by the app's ready()."""
    for job in JOBS:
        register(job)
