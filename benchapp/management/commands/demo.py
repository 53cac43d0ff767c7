"""`make demo`: build the demo world, run the demo campaign for real (replayed model answers,
live execution), then serve the app with a background worker on the embedded broker.

Composed here, at the top, from each app's part (``STEPS``): the project composes the apps,
and no app imports one above it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from evolution.demo import setup
from evolution.models.campaigns import CampaignState
from evolution.progress import ProgressBar
from evolution.services.campaigns import campaign_launch, campaign_pause
from evolution.streams.runner import run_inline
from evosyn.demo.setup import evosyn_demo
from frontiersmith.demo.setup import frontiersmith_demo
from reasoning.demo.setup import reasoning_demo
from releases.demo import releases_demo
from review.demo import review_demo_hook
from xcoder.demo.setup import xcoder_demo

# What each app adds after BenchEvolver's demo campaigns, in order: every kind's campaign before
# the review round and the release, which take their problems. Each step gets the world, the
# console and the demo admin.
STEPS = (
    reasoning_demo,
    xcoder_demo,
    evosyn_demo,
    frontiersmith_demo,
    review_demo_hook,
    releases_demo,
)


def _require_sandbox() -> None:
    """The demo's verdicts are real executions: without a working sandbox every lineage would
    fail, so stop before building anything, naming what to install."""
    from evolution.sandbox import Limits, SandboxError, TestSpec, judge

    try:
        result = judge(
            "print(int(input()) + 1)",
            [TestSpec(input="1\n", output="2\n")],
            harness="stdio",
            limits=Limits(time_s=10.0),
        )
        problem = (
            None if result.verdict == "AC" else f"a trivial program was judged {result.verdict}"
        )
    except SandboxError as exc:
        problem = str(exc)
    if problem:
        raise CommandError(
            f"The sandbox does not work here ({problem}). The demo runs every program in it. "
            "Install it and run again: sudo sh -c 'apt-get update && apt-get install -y "
            "bubblewrap python3' (or: sudo bash scripts/bootstrap.sh demo)."
        )


class Command(BaseCommand):
    help = "Build the demo data, run the demo campaign, and serve BenchForge."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--no-serve", action="store_true", help="build everything, then exit")

    def handle(self, *args, host, port, no_serve, **options):
        started = time.monotonic()
        _require_sandbox()
        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write("Importing seeds (HumanEval and the demo pack)…")
        world = setup.demo_world()
        logins = setup.demo_users()
        admin = get_user_model().objects.get(username="demo-admin")

        campaign = setup.demo_campaign(world, setup.COMPLETED_NAME, created_by=admin)
        if campaign.state == CampaignState.DRAFT:
            campaign_launch(campaign_id=campaign.pk)
        if campaign.state != CampaignState.COMPLETED:
            self.stdout.write(f"Running '{campaign.name}' (replayed responses, live execution)…")
            bar = ProgressBar(self.stderr, label="demo campaign")
            campaign = run_inline(
                campaign_id=campaign.pk, workers=2, on_progress=bar.update_campaign
            )
            bar.close()
        if campaign.state != CampaignState.COMPLETED:
            # Everything after it (review round, release, leaderboard) takes its problems.
            raise CommandError(
                f"Demo: '{campaign.name}' ended {campaign.state} ({campaign.state_reason})."
            )
        self.stdout.write(
            self.style.SUCCESS(f"'{campaign.name}': {campaign.state} ({campaign.state_reason})")
        )
        world.completed = campaign

        resumable = setup.demo_campaign(world, setup.RESUMABLE_NAME, created_by=admin)
        if resumable.state == CampaignState.DRAFT:
            campaign_launch(campaign_id=resumable.pk)
            run_inline(campaign_id=resumable.pk, workers=2, max_steps=12)
            campaign_pause(
                campaign_id=resumable.pk, reason="paused by the demo: press Resume to continue"
            )

        for step in STEPS:
            step(world=world, stdout=self.stdout, admin=admin)

        self.stdout.write(f"Demo data ready in {time.monotonic() - started:.0f} s.")
        url = f"http://{host}:{port}/"
        self.stdout.write(
            self.style.SUCCESS(f"\nBenchForge demo at {url}  (log in at {url}accounts/login/)")
        )
        for role, username, password in logins:
            self.stdout.write(f"  {role:9} {username:16} password: {password}")
        if no_serve:
            return
        self._serve(host, port)

    def _serve(self, host: str, port: int) -> None:
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "benchapp.settings"}
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "benchapp",
                "worker",
                "-Q",
                "default,sandbox",
                "-c",
                "2",
                "--loglevel",
                "WARNING",
            ],
            env=env,
        )
        server = subprocess.Popen(
            [sys.executable, "-m", "benchapp", "runserver", f"{host}:{port}", "--noreload"],
            env=env,
        )

        def stop(signum, frame):
            raise KeyboardInterrupt

        # A SIGTERM (a service manager, `kill`) stops the server and the worker as Ctrl-C does,
        # instead of leaving the worker running without its parent.
        signal.signal(signal.SIGTERM, stop)
        try:
            server.wait()
        except KeyboardInterrupt:
            pass
        finally:
            for proc in (server, worker):
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
            for proc in (server, worker):
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
