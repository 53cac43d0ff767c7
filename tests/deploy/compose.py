"""What the compose files say, as Docker Compose v2 itself reads them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDERS = {
    "POSTGRES_PASSWORD": "placeholder",
    "SECRET_KEY": "placeholder",
    "DATABASE_URL": "postgres://placeholder@machine-a:5432/benchforge",
    "REDIS_URL": "redis://machine-a:6379/0",
}


def compose_command() -> list[str]:
    """``docker compose`` (Compose v2; scripts/bootstrap.sh installs it)."""
    return [shutil.which("docker") or "docker", "compose"]


def compose_config(file: str = "docker-compose.yml") -> dict:
    # Placeholder secrets only let the file interpolate; what is read is its structure.
    env = {**os.environ, **PLACEHOLDERS}
    out = subprocess.run(
        [*compose_command(), "-f", file, "config"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return yaml.safe_load(out.stdout)
