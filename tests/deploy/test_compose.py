"""The compose file is what production runs: it must parse and keep its services apart."""

from __future__ import annotations

from .compose import ROOT, compose_config


def test_compose_file_is_valid_and_keeps_web_and_workers_apart():
    services = compose_config()["services"]
    assert {"web", "worker", "sandbox-worker", "db", "redis"} <= set(services)
    assert "gunicorn" in str(services["web"]["command"])
    assert "-Q default" in str(services["worker"]["command"])
    assert "-Q sandbox" in str(services["sandbox-worker"]["command"])


def test_compose_restarts_every_application_service():
    services = compose_config()["services"]
    for name in ("web", "worker", "sandbox-worker", "beat"):
        assert services[name]["restart"] == "unless-stopped", name
        assert "healthcheck" in services[name], name


def test_the_image_is_built_from_the_wheel_and_runs_unprivileged():
    """No Docker engine runs here; what can be checked without one is that the image installs
    the package (whose contents the production rehearsal proves) instead of a hand-kept list of
    folders, runs as an unprivileged user, and carries what the sandbox worker needs."""
    lines = [
        line.strip()
        for line in (ROOT / "Dockerfile").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    copies = [line for line in lines if line.startswith("COPY")]
    assert copies == ["COPY . .", "COPY --from=build /wheels /wheels"]
    text = "\n".join(lines)
    assert "pip wheel" in text and "pip install --no-cache-dir /wheels/*.whl" in text
    assert "bubblewrap" in text and " python3" in text
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", "var", ".git"} <= set(ignored)
