"""A configuration error at the terminal is one line naming it, not a traceback (issue: with
DEBUG unset and no SECRET_KEY, `create_user` printed Django's traceback before the message)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_missing_secret_key_is_said_in_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG")}
    env["BENCHFORGE_DATA_DIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "manage.py", "create_user", "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert (
        done.stderr == "benchforge: configuration error: SECRET_KEY must be set when DEBUG is off\n"
    )
    assert "Traceback" not in done.stdout + done.stderr
