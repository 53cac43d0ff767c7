"""The compose file's `beat` service has a health check that really checks beat: its scheduler
(benchapp/beat.py) writes a heartbeat each time its loop turns, and the check fails once the
heartbeat is older than the limit. Proven with a real `celery beat` process, killed."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
import time

from benchapp import beat
from tests.support.workers import ROOT, kill_group, wait_for, worker_env

from .compose import compose_config


def _check(schedule, max_age: float) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "benchapp.beat",
            "--schedule",
            str(schedule),
            "--max-age",
            str(max_age),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_compose_beat_service_checks_the_heartbeat_of_its_own_schedule():
    service = compose_config()["services"]["beat"]
    assert service["restart"] == "unless-stopped"
    command = service["command"]  # Compose v2 reads a command as a list of words
    command = shlex.split(command) if isinstance(command, str) else command
    schedule = command[command.index("--schedule") + 1]
    test = service["healthcheck"]["test"]
    assert test[:4] == ["CMD", "python", "-m", "benchapp.beat"]
    assert test[test.index("--schedule") + 1] == schedule
    assert float(test[test.index("--max-age") + 1]) >= 4 * beat.DEFAULT_HEARTBEAT_SECONDS


def test_a_running_beat_is_healthy_and_a_killed_one_is_not(tmp_path, db):
    schedule = tmp_path / "celerybeat-schedule"
    assert _check(schedule, 60).returncode == 1  # never started: no heartbeat
    env = {**worker_env(), "BEAT_HEARTBEAT_SECONDS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "benchapp", "beat", "--loglevel", "WARNING"]
        + ["--schedule", str(schedule)],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    heartbeat = beat.heartbeat_path(schedule)
    try:
        wait_for(heartbeat.exists, 120, "beat's first heartbeat")
        first = float(heartbeat.read_text())
        # The loop keeps turning: a newer heartbeat within a few BEAT_HEARTBEAT_SECONDS.
        wait_for(lambda: float(heartbeat.read_text()) > first, 30, "a newer heartbeat")
        alive = _check(schedule, 10)
        assert alive.returncode == 0, alive.stdout + alive.stderr
        assert "beat alive" in alive.stdout
    finally:
        kill_group(proc, signal.SIGKILL)
    time.sleep(3)
    dead = _check(schedule, 2)
    assert dead.returncode == 1
    assert "beat's last heartbeat is" in dead.stdout and "old (more than 2 s)" in dead.stdout


def test_the_heartbeat_never_slows_the_schedule(tmp_path, monkeypatch, settings):
    """A tick that just sent an entry answers 0 ("again at once"): kept, never turned into a
    heartbeat period's sleep (that had the campaign supervisor's 1 s entry run every 15 s);
    longer waits are cut to BEAT_HEARTBEAT_SECONDS so the heartbeat stays fresh."""
    from celery.beat import PersistentScheduler

    settings.BEAT_HEARTBEAT_SECONDS = 15
    scheduler = object.__new__(beat.Scheduler)
    scheduler.schedule_filename = str(tmp_path / "schedule")
    for celery_says, expected in ((0, 0), (0.4, 0.4), (300, 15)):
        monkeypatch.setattr(PersistentScheduler, "tick", lambda self, *a, v=celery_says, **k: v)
        assert scheduler.tick() == expected
    assert beat.check(scheduler.schedule_filename, 5)[0]
