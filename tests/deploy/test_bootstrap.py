"""scripts/bootstrap.sh: the one set-up step behind `make demo`, `make test` and CI.

Its real run (installing bubblewrap, Chromium and docker-compose on a fresh machine) happens
every time CI starts on a new machine; here its decisions are checked on a PATH that hides
tools, in dry-run mode, so nothing on this machine is changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "bootstrap.sh"


def _bin_without(tmp_path: Path, *hidden: str, fakes: dict[str, str] | None = None) -> str:
    """A PATH holding links to the tools the script uses, less ``hidden``, plus ``fakes``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in (
        "bash",
        "id",
        "seq",
        "sleep",
        "ls",
        "head",
        "cat",
        "pg_isready",
        "pg_ctlcluster",
        "redis-server",
        "bwrap",
        "chromium",
        "docker",
        "grep",
        "dockerd",
        "debootstrap",
        "dirname",
        "sha256sum",
        "cut",
        "tr",
        "mktemp",
    ):
        found = shutil.which(tool)
        if found and tool not in hidden:
            (bin_dir / tool).symlink_to(found)
    for name, body in (fakes or {}).items():
        (bin_dir / name).unlink(missing_ok=True)
        (bin_dir / name).write_text("#!/bin/sh\n" + body + "\n")
        (bin_dir / name).chmod(0o755)
    return str(bin_dir)


def _run(target: str, path: str, *, dry: bool = True, user: int | None = None):
    env = {"PATH": path, "BENCHFORGE_BOOTSTRAP_DRY_RUN": "1" if dry else "0"}
    argv = ["bash", str(SCRIPT), target]
    if user is not None:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *argv]
        env["PATH"] = path + ":/usr/bin:/bin"
    bash = shutil.which("bash")
    return subprocess.run(
        [bash if argv[0] == "bash" else shutil.which(argv[0]), *argv[1:]],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


def test_as_root_it_installs_what_the_target_lacks(tmp_path):
    path = _bin_without(tmp_path, "bwrap", "chromium", "dockerd", "debootstrap")
    demo = _run("demo", path)
    assert demo.returncode == 0, demo.stderr
    assert "would run: apt-get update && apt-get install -y bubblewrap\n" in demo.stdout
    test = _run("test", path)
    assert test.returncode == 0, test.stderr
    assert "apt-get install -y bubblewrap chromium docker.io debootstrap" in test.stdout


def test_with_everything_installed_it_does_nothing(tmp_path):
    done = _run("test", _bin_without(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == ""


def test_as_another_user_it_stops_with_the_exact_command():
    # Not under pytest's tmp_path, which is private to root: the user must read this PATH, and
    # a copy of the script, since the checkout itself may be readable by its owner alone.
    with tempfile.TemporaryDirectory() as scratch:
        Path(scratch).chmod(0o755)
        path = _bin_without(Path(scratch), "bwrap")
        script = Path(scratch) / "bootstrap.sh"
        shutil.copy(SCRIPT, script)
        script.chmod(0o755)
        done = subprocess.run(
            [
                shutil.which("setpriv"),
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                shutil.which("bash"),
                str(script),
                "demo",
            ],
            env={"PATH": path, "SANDBOX_PYTHON": "/nonexistent/python3"},
            capture_output=True,
            text=True,
            timeout=60,
            cwd=scratch,
        )
    assert done.returncode == 1
    assert "missing system packages for 'make demo': bubblewrap python3." in done.stderr
    assert "sudo sh -c 'apt-get update && apt-get install -y bubblewrap python3'" in done.stderr
    assert done.stdout == ""


def test_it_starts_postgresql_when_installed_but_stopped(tmp_path):
    path = _bin_without(tmp_path, fakes={"pg_isready": "exit 2"})
    done = _run("test", path)
    assert done.returncode == 0, done.stderr
    version = sorted(os.listdir("/etc/postgresql"))[0]
    assert f"would run: pg_ctlcluster --skip-systemctl-redirect {version} main start" in done.stdout


def test_it_starts_the_docker_engine_when_installed_but_stopped(tmp_path):
    path = _bin_without(tmp_path, fakes={"docker": "exit 1"})
    done = _run("test", path)
    assert done.returncode == 0, done.stderr
    assert "would run: dockerd --iptables=false --ip-forward=false --bridge=none" in done.stdout
    assert "would install Compose v2: Debian trixie's docker-compose" in done.stdout
    # Without an engine the images cannot be looked at: the script says it would build them.
    assert "would run: deploy/images/build.sh" in done.stdout


def test_it_builds_the_base_images_when_one_is_missing(tmp_path):
    # An engine that answers but has no image at all.
    path = _bin_without(
        tmp_path,
        fakes={
            "docker": 'case "$1" in info) exit 0;; compose) echo "Docker Compose version'
            ' v2.26.1"; exit 0;; esac; exit 1'
        },
    )
    done = _run("test", path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "bootstrap: would run: deploy/images/build.sh\n"


def test_a_wrong_target_is_refused():
    done = subprocess.run(["bash", str(SCRIPT), "serve"], capture_output=True, text=True)
    assert done.returncode == 2 and "usage: scripts/bootstrap.sh demo|test" in done.stderr


def test_make_demo_and_make_test_bootstrap_before_anything_else():
    for target, then in (("demo", "manage.py demo"), ("test", "pytest")):
        plan = subprocess.run(
            ["make", "-n", "-W", "pyproject.toml", target],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        ).stdout
        assert f"bash scripts/bootstrap.sh {target}" in plan
        assert plan.index(f"bootstrap.sh {target}") < plan.index(then)
    assert (ROOT / ".ci" / "run").read_text().strip().endswith("make test")
