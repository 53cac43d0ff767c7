"""No noise lines: the embedded brokers (filesystem for `make demo`, memory) give kombu a host
name, so no command prints "No hostname was supplied. Reverting to default 'localhost'"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "import django; django.setup();"
    "from celery import current_app;"
    "conn = current_app.connection_for_write(); conn._info(); print('broker', conn.transport_cls)"
)


@pytest.mark.parametrize("kind", ["filesystem", "memory"])
def test_an_embedded_broker_connects_without_a_warning(kind, tmp_path):
    env = {
        **os.environ,
        "BROKER_KIND": kind,
        "DJANGO_SETTINGS_MODULE": "benchapp.settings",
        "BENCHFORGE_DATA_DIR": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-c", "import benchapp.celery;" + PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert f"broker {kind}" in done.stdout
    assert "No hostname was supplied" not in done.stderr + done.stdout
