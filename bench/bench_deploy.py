"""The Docker deployment: what its images weigh and how long the stack takes to come up.

On the local Docker engine (``scripts/bootstrap.sh test`` starts it and builds the base images),
from a clean copy of the tree (git's files only): the project image built with the Dockerfile as
docs/deployment.md shows for a machine without an image registry (layers cached from earlier
builds, as on a developer's machine: the row says how long the rebuild took), then the
documented stack brought up cold (new volumes: PostgreSQL initialised, migrations,
collectstatic) with ``docker compose up -d --wait`` until every service is healthy, and taken
down again with ``down -v``. Each image's size is what ``docker image inspect`` reports
(uncompressed, all layers).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from bench.support import ROOT

NAME = "Docker deployment: image sizes and a cold stack to healthy (bench_deploy)"
FILES = ("-f", "docker-compose.yml", "-f", "deploy/local-images.yml")
BUILD = [
    "docker",
    "build",
    "--network",
    "host",
    "--build-arg",
    "PYTHON_IMAGE=benchforge-local/python:3.11-slim-bookworm",
    "-t",
    "benchforge:latest",
    ".",
]


def _run(argv, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, capture_output=True, text=True, **kw)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr[-2000:]}")
    return done


def _copy_source(dest: Path) -> None:
    files = _run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT
    ).stdout.split("\0")
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def _size_mb(image: str) -> float:
    size = _run(["docker", "image", "inspect", image, "--format", "{{.Size}}"]).stdout
    return int(size) / 1e6


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(args) -> list[dict]:
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        raise RuntimeError("no Docker engine answers: run `bash scripts/bootstrap.sh test` as root")
    _run(["bash", str(ROOT / "deploy" / "images" / "build.sh")])
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch)
        _copy_source(source)
        env = {
            **os.environ,
            "DOCKER_BUILDKIT": "0",
            "COMPOSE_PROJECT_NAME": f"bfbench{os.getpid()}",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "POSTGRES_PASSWORD": secrets.token_urlsafe(24),
            "BENCHFORGE_PORT": str(_free_port()),
        }
        started = time.perf_counter()
        _run(BUILD, cwd=source, env=env)
        rows.append(
            {
                "measure": "project image rebuilt from the tree (layers cached)",
                "value": f"{time.perf_counter() - started:.1f} s",
            }
        )
        for image, what in (
            ("benchforge:latest", "project image (web, workers, beat)"),
            ("benchforge-local/bookworm:latest", "docker sandbox image (Debian + python3)"),
            ("benchforge-local/python:3.11-slim-bookworm", "Python base (stand-in)"),
            ("benchforge-local/postgres:15", "PostgreSQL (stand-in)"),
            ("benchforge-local/redis:7", "Redis (stand-in)"),
        ):
            rows.append({"measure": f"{what}: {image}", "value": f"{_size_mb(image):.0f} MB"})
        compose = ["docker", "compose", *FILES]
        try:
            started = time.perf_counter()
            _run([*compose, "up", "-d", "--wait"], cwd=source, env=env, timeout=600)
            rows.append(
                {
                    "measure": "cold `docker compose up -d --wait` to every service healthy",
                    "value": f"{time.perf_counter() - started:.1f} s",
                }
            )
        finally:
            started = time.perf_counter()
            _run([*compose, "down", "-v", "-t", "5"], cwd=source, env=env, timeout=300)
            rows.append(
                {
                    "measure": "`docker compose down -v`",
                    "value": f"{time.perf_counter() - started:.1f} s",
                }
            )
    return rows
