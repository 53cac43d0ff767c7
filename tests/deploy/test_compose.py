"""The compose file is what production runs: it must parse and keep its services apart."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _config() -> dict:
    # Placeholder secrets only let the file interpolate; what is checked is its structure.
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


def test_compose_file_is_valid_and_keeps_web_and_workers_apart():
    services = _config()["services"]
    assert {"web", "worker", "sandbox-worker", "db", "redis"} <= set(services)
    assert "gunicorn" in str(services["web"]["command"])
    assert "-Q default" in str(services["worker"]["command"])
    assert "-Q sandbox" in str(services["sandbox-worker"]["command"])
