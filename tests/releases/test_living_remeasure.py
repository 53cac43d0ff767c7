"""The end-to-end living-benchmark loop on a real Celery worker, run in a pytest process of its
own (tests/releases/living_remeasure_e2e.py).

Run after the rest of the suite in one long-lived process, the first re-measurement's message
was lost between this process and the worker (the worker idle, its queue empty, the row still
queued), while the same test passes in a fresh process; until that is understood, the loop is
proven in a fresh process, with its own test database, rather than not at all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow]


def test_the_living_loop_runs_end_to_end_on_a_worker_in_a_fresh_process():
    name = connection.settings_dict["NAME"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["DATABASE_TEST_NAME"] = f"{name}_living_e2e"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/releases/living_remeasure_e2e.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
