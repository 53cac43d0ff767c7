"""The independent evaluation on a real Celery worker, in a pytest process of its own
(tests/releases/independent_worker_e2e.py), for the reason given in test_living_remeasure.py:
in the long suite process a first message to a fresh worker was once lost."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow]


def test_the_independent_evaluation_runs_on_a_worker_in_a_fresh_process():
    name = connection.settings_dict["NAME"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["DATABASE_TEST_NAME"] = f"{name}_gate_eval_e2e"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/releases/independent_worker_e2e.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
