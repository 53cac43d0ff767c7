"""What docker-compose.yml says, as docker-compose itself reads it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def compose_config() -> dict:
    # Placeholder secrets only let the file interpolate; what is read is its structure.
    env = {**os.environ, "POSTGRES_PASSWORD": "placeholder", "SECRET_KEY": "placeholder"}
    out = subprocess.run(
        [shutil.which("docker-compose") or "docker-compose", "-f", "docker-compose.yml", "config"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return yaml.safe_load(out.stdout)
