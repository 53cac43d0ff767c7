"""Releases' background jobs pause or heal, never stall (evolution.jobs, the one job machinery
releases.jobs registers them with): one execution holds a
job at a time, a lost message is sent again once, a job whose worker stopped heartbeating is
queued again (or failed with the reason after JOB_MAX_LOST_WORKERS), and the pages say so.
The same with real worker processes is in jobs_worker_e2e.py."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from evolution import jobs
from releases import independent, leaderboard, services
from releases.jobs import LEADERBOARD_RUN, REMEASUREMENT
from releases.models import (
    GateEvaluation,
    LeaderboardRun,
    QuestionRun,
    Remeasurement,
    RemeasurementTrigger,
    RunState,
)
from tests.support.answers import fenced
from tests.support.fake_openai import FakeOpenAI
from tests.support.gate_rules import SELECTION_TIME_OK

from .builders import SUM_CODE, crafted_world
from .living_support import endpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    """Task messages the supervisor publishes, recorded instead of sent."""
    out: list[tuple[str, int]] = []
    monkeypatch.setattr(jobs, "_send", lambda job, pk: out.append((job.task, pk)))
    return out


@pytest.fixture
def run(frozen):
    _, release = frozen
    with FakeOpenAI() as server:
        return leaderboard.run_create(release=release, endpoint=endpoint(server, "m"), samples=1)


def _age(model, pk: int, **ago):
    now = timezone.now()
    model.objects.filter(pk=pk).update(
        **{name: now - timedelta(seconds=seconds) for name, seconds in ago.items()}
    )


def test_one_execution_holds_a_job_at_a_time(run, settings):
    settings.JOB_LOST_SECONDS = 60
    token = jobs.claim(LeaderboardRun, run.pk)
    assert token
    # A second message for the same run while its holder beats: a no-op.
    assert jobs.claim(LeaderboardRun, run.pk) is None
    # The holder's heartbeat stopped longer than JOB_LOST_SECONDS ago: taken over.
    _age(LeaderboardRun, run.pk, heartbeat_at=61)
    successor = jobs.claim(LeaderboardRun, run.pk)
    assert successor and successor != token
    # The old holder's outcome no longer lands; the successor's does.
    assert not jobs.finish(LeaderboardRun, run.pk, token, state=RunState.FAILED, error="old")
    # (A leaderboard run is completed by the scoring service's own write of its result.)
    assert leaderboard.record_completion(
        LeaderboardRun, run.pk, successor, summary=leaderboard.run_summary(run=run)
    )
    assert jobs.claim(LeaderboardRun, run.pk) is None  # completed: nothing to take


def test_a_queued_job_whose_message_was_lost_is_sent_again_once(run, settings, sent):
    settings.JOB_RESEND_SECONDS = 600
    fresh = LeaderboardRun.objects.create(
        release=run.release, endpoint=run.endpoint, label="fresh", samples_per_problem=1
    )
    _age(LeaderboardRun, run.pk, created_at=700)  # created, its publish lost
    _age(LeaderboardRun, fresh.pk, created_at=10)

    report = jobs.supervise()
    assert sent == [("releases.tasks.leaderboard_run", run.pk)]
    assert report.resent == [f"leaderboard run {run.pk}"]
    run.refresh_from_db()
    assert run.state == RunState.QUEUED and run.sent_at is not None
    assert "message re-sent" in run.recovery and "never sent" in run.recovery
    # The next pass leaves it alone until JOB_RESEND_SECONDS after this send.
    jobs.supervise()
    assert len(sent) == 1
    _age(LeaderboardRun, run.pk, sent_at=601)
    jobs.supervise()
    assert len(sent) == 2


def test_a_run_inside_a_queued_remeasurement_is_left_to_it(run, settings, sent):
    settings.JOB_RESEND_SECONDS = 600
    remeasurement = Remeasurement.objects.create(
        benchmark=run.release.benchmark,
        release=run.release,
        trigger=RemeasurementTrigger.MANUAL,
        sent_at=timezone.now(),
    )
    remeasurement.runs.set([run])
    _age(LeaderboardRun, run.pk, created_at=700)
    jobs.supervise()
    assert sent == []
    # Once the re-measurement is over, a run still queued depends on its own message again.
    Remeasurement.objects.filter(pk=remeasurement.pk).update(state="failed")
    jobs.supervise()
    assert sent == [("releases.tasks.leaderboard_run", run.pk)]


def test_a_job_whose_worker_died_is_queued_again_then_failed_with_the_reason(
    run, settings, sent, client, django_user_model
):
    settings.JOB_LOST_SECONDS = 120
    settings.JOB_MAX_LOST_WORKERS = 2
    assert jobs.claim(LeaderboardRun, run.pk)
    _age(LeaderboardRun, run.pk, heartbeat_at=30)
    jobs.supervise()  # heartbeat 30 s old: alive
    assert sent == []

    _age(LeaderboardRun, run.pk, heartbeat_at=121)
    report = jobs.supervise()
    assert report.requeued == [f"leaderboard run {run.pk}"]
    assert sent == [("releases.tasks.leaderboard_run", run.pk)]
    run.refresh_from_db()
    assert (run.state, run.lost_workers, run.claim) == (RunState.QUEUED, 1, "")
    assert "re-queued by the supervisor" in run.recovery
    assert "its worker stopped heartbeating" in run.recovery and "(lost worker 1 of 2)" in (
        run.recovery
    )

    # Its next worker dies too: the second lost worker fails it, naming why.
    assert jobs.claim(LeaderboardRun, run.pk)
    _age(LeaderboardRun, run.pk, heartbeat_at=500)
    report = jobs.supervise()
    assert report.failed == [f"leaderboard run {run.pk}"]
    run.refresh_from_db()
    assert run.state == RunState.FAILED and run.lost_workers == 2
    assert "failed by the supervisor" in run.error
    assert "JOB_MAX_LOST_WORKERS=2" in run.error

    # The curator's pages say so.
    admin = django_user_model.objects.create_superuser("admin", "a@x.org", "pw")
    client.force_login(admin)
    page = client.get(reverse("releases:run_detail", args=[run.pk])).content.decode()
    assert "failed by the supervisor" in page
    page = client.get(reverse("releases:curate_detail", args=[run.release.pk])).content.decode()
    assert "failed by the supervisor" in page


def test_a_stuck_independent_evaluation_no_longer_blocks_the_next_one(
    settings, sent, transactional_db
):
    """An evaluation left running by a dead worker blocked every new one for good; the
    supervisor takes it back, and once it has failed a new evaluation may start."""
    settings.JOB_MAX_LOST_WORKERS = 1
    world = crafted_world()
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="LiveCodeBench-Plus")
    release = services.release_create(benchmark=bench, campaigns=[world.campaign])
    with FakeOpenAI() as server:
        server.responder = lambda body, headers: fenced(SUM_CODE)
        independent.panel_update(
            release=release,
            endpoints=[endpoint(server, "fresh")],
            samples=1,
            exclude_selection_models=True,
        )
        first = services.gate_evaluation_start(release=release)
        assert jobs.claim(GateEvaluation, first.pk)  # its worker then dies
        with pytest.raises(ValidationError, match="already under way"):
            services.gate_evaluation_start(release=release)

        _age(GateEvaluation, first.pk, heartbeat_at=settings.JOB_LOST_SECONDS + 1)
        assert jobs.supervise().failed == [f"independent evaluation {first.pk}"]
        first.refresh_from_db()
        assert first.state == "failed" and "its worker stopped heartbeating" in first.error

        second = services.gate_evaluation_start(release=release)
        second = independent.evaluation_execute(evaluation_id=second.pk)
    assert second.state == "completed", second.error


def test_a_remeasurement_whose_worker_died_is_queued_again_and_resent(published, settings, sent):
    _, release = published
    with FakeOpenAI() as server:
        run = leaderboard.run_create(release=release, endpoint=endpoint(server, "m"), samples=1)
    remeasurement = Remeasurement.objects.create(
        benchmark=release.benchmark, release=release, trigger=RemeasurementTrigger.MANUAL
    )
    remeasurement.runs.set([run])
    assert jobs.claim(Remeasurement, remeasurement.pk)
    assert jobs.claim(LeaderboardRun, run.pk)
    _age(Remeasurement, remeasurement.pk, heartbeat_at=settings.JOB_LOST_SECONDS + 1)
    _age(LeaderboardRun, run.pk, heartbeat_at=settings.JOB_LOST_SECONDS + 1)
    report = jobs.supervise()
    assert sorted(report.requeued) == [
        f"leaderboard run {run.pk}",
        f"re-measurement {remeasurement.pk}",
    ]
    # Only the re-measurement gets a message: it runs its own runs (taking the dead one over).
    assert sent == [("releases.tasks.remeasurement_run", remeasurement.pk)]
    remeasurement.refresh_from_db()
    assert (
        remeasurement.state == "queued" and "re-queued by the supervisor" in remeasurement.recovery
    )


def test_a_question_run_is_supervised_like_the_others(run, settings, sent):
    """The question leaderboard's runs: a lost message is sent again, a dead worker's run is
    queued again with its own task."""
    question_run = QuestionRun.objects.create(
        release=run.release, endpoint=run.endpoint, label="answers"
    )
    _age(QuestionRun, question_run.pk, created_at=settings.JOB_RESEND_SECONDS + 1)
    LeaderboardRun.objects.filter(pk=run.pk).update(state=RunState.FAILED)  # not re-sent
    jobs.supervise()
    assert sent == [("releases.tasks.question_run", question_run.pk)]
    assert jobs.claim(QuestionRun, question_run.pk)
    assert jobs.claim(QuestionRun, question_run.pk) is None
    _age(QuestionRun, question_run.pk, heartbeat_at=settings.JOB_LOST_SECONDS + 1)
    assert jobs.supervise().requeued == [f"question run {question_run.pk}"]
    assert sent[-1] == ("releases.tasks.question_run", question_run.pk)


@pytest.mark.parametrize("through", ["page", "service"])
def test_running_a_failed_job_again_resets_its_lost_workers(
    run, settings, sent, client, django_user_model, django_capture_on_commit_callbacks, through
):
    """A job failed after JOB_MAX_LOST_WORKERS lost workers and run again by a curator starts
    with no lost worker: the next lost worker queues it again instead of failing it at once."""
    settings.JOB_MAX_LOST_WORKERS = 2
    for _ in range(2):  # two workers die: failed
        assert jobs.claim(LeaderboardRun, run.pk)
        _age(LeaderboardRun, run.pk, heartbeat_at=settings.JOB_LOST_SECONDS + 1)
        jobs.supervise()
    run.refresh_from_db()
    assert (run.state, run.lost_workers) == (RunState.FAILED, 2)
    sent.clear()

    curator = django_user_model.objects.create_superuser("carla", "c@x.org", "pw")
    with django_capture_on_commit_callbacks(execute=True):
        if through == "page":
            client.force_login(curator)
            page = client.post(
                reverse("releases:job_run_again", args=["leaderboard-run", run.pk]), follow=True
            ).content.decode()
            assert "is queued again" in page and "run again by carla" in page
        else:
            assert jobs.job_run_again(job=LEADERBOARD_RUN, pk=run.pk, by=curator)
    assert sent == [("releases.tasks.leaderboard_run", run.pk)]
    run.refresh_from_db()
    assert (run.state, run.lost_workers, run.error) == (RunState.QUEUED, 0, "")
    assert run.recovery.startswith("run again by carla")

    # Its next worker dies: one lost worker of two, queued again, not failed.
    assert jobs.claim(LeaderboardRun, run.pk)
    _age(LeaderboardRun, run.pk, heartbeat_at=settings.JOB_LOST_SECONDS + 1)
    report = jobs.supervise()
    assert report.requeued == [f"leaderboard run {run.pk}"] and report.failed == []
    run.refresh_from_db()
    assert (run.state, run.lost_workers) == (RunState.QUEUED, 1)


def test_only_a_failed_job_is_run_again(run, sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        assert not jobs.job_run_again(job=LEADERBOARD_RUN, pk=run.pk)  # queued
        assert jobs.claim(LeaderboardRun, run.pk)
        assert not jobs.job_run_again(job=LEADERBOARD_RUN, pk=run.pk)  # running
    run.refresh_from_db()
    assert run.state == RunState.RUNNING and sent == []


def test_a_failed_remeasurement_run_again_resets_its_failed_runs_and_is_sent(
    published, sent, django_capture_on_commit_callbacks
):
    _, release = published
    with FakeOpenAI() as server:
        run = leaderboard.run_create(release=release, endpoint=endpoint(server, "m"), samples=1)
    remeasurement = Remeasurement.objects.create(
        benchmark=release.benchmark, release=release, trigger=RemeasurementTrigger.MANUAL
    )
    remeasurement.runs.set([run])
    Remeasurement.objects.filter(pk=remeasurement.pk).update(state="failed", lost_workers=3)
    LeaderboardRun.objects.filter(pk=run.pk).update(state=RunState.FAILED, lost_workers=3)

    with django_capture_on_commit_callbacks(execute=True):
        assert jobs.job_run_again(job=REMEASUREMENT, pk=remeasurement.pk)
    # The re-measurement runs its runs: it alone gets a message.
    assert sent == [("releases.tasks.remeasurement_run", remeasurement.pk)]
    remeasurement.refresh_from_db()
    run.refresh_from_db()
    assert (remeasurement.state, remeasurement.lost_workers) == ("queued", 0)
    assert (run.state, run.lost_workers) == (RunState.QUEUED, 0)
