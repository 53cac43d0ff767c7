"""The compose file is what production runs: it must parse and keep its services apart."""

from __future__ import annotations

import json
import os
import subprocess

from .compose import PLACEHOLDERS, ROOT, compose_command, compose_config


def test_compose_file_is_valid_and_keeps_web_and_workers_apart():
    services = compose_config()["services"]
    assert {"web", "worker", "sandbox-worker", "db", "redis"} <= set(services)
    assert "gunicorn" in " ".join(services["web"]["command"])
    assert "-Q default" in " ".join(services["worker"]["command"])
    assert "-Q sandbox" in " ".join(services["sandbox-worker"]["command"])


def test_the_web_health_check_asks_as_a_host_the_site_answers_to():
    """The check asked http://127.0.0.1:8000 while ALLOWED_HOSTS defaulted to localhost: every
    answer was 400 and the web app never became healthy. It asks as localhost, which the
    file's ALLOWED_HOSTS always holds, whatever the lab adds."""
    web = compose_config()["services"]["web"]
    assert "'Host': 'localhost'" in web["healthcheck"]["test"][-1]
    assert web["environment"]["ALLOWED_HOSTS"].split(",")[0] == "localhost"
    env = {**os.environ, **PLACEHOLDERS, "ALLOWED_HOSTS": "bench.example.org"}
    out = subprocess.run(
        [*compose_command(), "config", "--format", "json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    hosts = json.loads(out.stdout)["services"]["web"]["environment"]["ALLOWED_HOSTS"]
    assert hosts == "localhost,bench.example.org"


def test_compose_restarts_every_application_service():
    services = compose_config()["services"]
    for name in ("web", "worker", "sandbox-worker", "beat"):
        assert services[name]["restart"] == "unless-stopped", name
        assert "healthcheck" in services[name], name
        # Orphans inside the container are reaped (test_compose_stack.py finds none left).
        assert services[name]["init"] is True, name


def test_worker_health_checks_name_the_container_they_run_in():
    """Exec form runs no shell: "celery@$HOSTNAME" stayed literal and no worker ever answered
    the ping (every worker unhealthy). A shell expands it."""
    services = compose_config()["services"]
    for name in ("worker", "sandbox-worker"):
        test = services[name]["healthcheck"]["test"]
        assert test[0] == "CMD-SHELL" and "celery@$$HOSTNAME" in test[1], (name, test)


def test_the_sandbox_worker_may_make_namespaces_and_nothing_more():
    """bubblewrap inside the container needs seccomp, AppArmor and Docker's /proc masks out of
    its way (each explained in the file); the worker keeps no capability and gains none."""
    worker = compose_config()["services"]["sandbox-worker"]
    assert set(worker["security_opt"]) == {
        "seccomp=unconfined",
        "apparmor=unconfined",
        "systempaths=unconfined",
        "no-new-privileges:true",
    }
    assert worker["cap_drop"] == ["ALL"]
    assert not worker.get("privileged") and not worker.get("cap_add")
    # No cgroups for the sandboxes in the container: its pids limit keeps a fork bomb off the
    # host (one without it exhausted the machine's processes for the bomb's time limit).
    assert 0 < worker["pids_limit"] <= 4096
    for name in ("web", "worker", "beat"):
        assert "security_opt" not in compose_config()["services"][name], name


def test_the_sandbox_machine_runs_the_same_sandbox_worker():
    """docker-compose.sandbox.yml (machine B) repeats the sandbox worker's definition: it must
    not drift from docker-compose.yml's."""
    ours = compose_config()["services"]["sandbox-worker"]
    theirs = compose_config("docker-compose.sandbox.yml")["services"]
    assert set(theirs) == {"sandbox-worker"}
    theirs = theirs["sandbox-worker"]
    for key in (
        "image",
        "command",
        "healthcheck",
        "security_opt",
        "cap_drop",
        "restart",
        "init",
        "pids_limit",
    ):
        assert theirs[key] == ours[key], key
    assert (
        theirs["environment"]["DATABASE_URL"] == "postgres://placeholder@machine-a:5432/benchforge"
    )
    assert theirs["environment"]["REDIS_URL"] == "redis://machine-a:6379/0"
    assert "depends_on" not in theirs
    # Machine B holds no model keys and no web secrets beyond Django's key.
    assert set(theirs["environment"]) == {
        "DATABASE_URL",
        "REDIS_URL",
        "BROKER_KIND",
        "SECRET_KEY",
        "DEBUG",
    }


def test_the_image_is_built_from_the_wheel_and_runs_unprivileged():
    """The image installs the package (whose contents the production rehearsal proves) instead
    of a hand-kept list of folders, runs as an unprivileged user, and carries what the sandbox
    worker needs (tests/deploy/test_compose_stack.py builds and runs it)."""
    lines = [
        line.strip()
        for line in (ROOT / "Dockerfile").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    copies = [line for line in lines if line.startswith("COPY")]
    assert copies == [
        "COPY . .",
        "COPY --from=build /wheels/requirements.txt /wheels/requirements.txt",
        "COPY --from=build /wheels /wheels",
    ]
    text = "\n".join(lines)
    assert "pip wheel" in text and "pip install --no-cache-dir /wheels/*.whl" in text
    assert "bubblewrap" in text and " python3" in text
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    ignored = (ROOT / ".dockerignore").read_text().split()
    # Local state and the env file of secrets never go into the image.
    assert {".venv", "var", ".git", "benchforge.env"} <= set(ignored)
