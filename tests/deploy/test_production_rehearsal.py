"""The documented deployment in miniature, from the wheel, without containers.

The compose stack itself runs in test_compose_stack.py; this rehearses the same commands as
plain processes of an installed wheel, as a lab without Docker runs them: the wheel built from
this tree installed into a fresh virtualenv outside it, ``migrate`` and ``check --deploy``
against PostgreSQL with ``DEBUG=0``, gunicorn, one Celery worker on the ``default`` queue and
one on the ``sandbox`` queue as separate processes of that install, users and a bearer token
from the installed ``benchforge`` command, and a campaign over the demo pack created and
launched through the HTTP API. Model answers come from the loopback server (the pack's
authored answers); everything else is the installed application.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import venv
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import httpx
import psycopg
import pytest
from django.conf import settings

from evolution.benchevolver.demo import pack
from tests.evolution.benchevolver.helpers import KeyedResponder
from tests.support.fake_openai import FakeOpenAI

from . import campaign_flow
from .compose import compose_config

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def compose_commands() -> dict[str, str]:
    """What docker-compose.yml runs in each application service."""
    services = compose_config()["services"]
    commands = {}
    for name in ("web", "worker", "sandbox-worker"):
        command = services[name]["command"]
        commands[name] = command if isinstance(command, str) else shlex.join(command)
    # `sh -c "…"` in the file: the shell's script is what runs.
    if commands["web"].startswith("sh -c "):
        commands["web"] = shlex.split(commands["web"])[2]
    return commands


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(cmd, *, env=None, cwd=None, timeout=600) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done


def copy_source(dest: Path) -> Path:
    """The tree as git sees it (tracked and untracked-but-not-ignored files), so a build leaves
    nothing behind in the checkout and never packages local state."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, files):
        src = ROOT / name.decode()
        if src.is_file():
            target = dest / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh virtualenv with BenchForge installed from its wheel; returns its bin/."""
    work = tmp_path_factory.mktemp("rehearsal")
    source = copy_source(work / "src")
    wheels = work / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(source)])
    (wheel,) = wheels.glob("benchforge-*.whl")
    env_dir = work / "venv"
    venv.create(env_dir, with_pip=True)
    # --no-compile: the processes compile what they import (a fraction of plotly's and
    # pyarrow's files); compiling every installed module took half of the install's CPU time.
    _run(
        [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile", str(wheel)],
        timeout=900,
    )
    return env_dir / "bin"


@pytest.fixture(scope="module")
def database():
    """A database of its own, created and dropped here, as an operator would."""
    base = urlparse(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/benchforge"))
    name = f"bf_rehearsal_{os.getpid()}"
    admin_dsn = urlunparse(base._replace(path="/postgres"))
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    yield urlunparse(base._replace(path=f"/{name}"))
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _redis_url() -> str:
    # A Redis database index of its own, so its queues never mix with the suite's workers.
    parsed = urlparse(settings.REDIS_URL)
    index = int((parsed.path or "/0").strip("/") or 0)
    return urlunparse(parsed._replace(path=f"/{(index + 8) % 16}"))


def _app_env(*, database: str, data_dir: Path) -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        DATABASE_URL=database,
        REDIS_URL=_redis_url(),
        BROKER_KIND="redis",
        DEBUG="0",
        SECRET_KEY="rehearsal-" + os.urandom(32).hex(),
        ALLOWED_HOSTS="127.0.0.1,localhost",
        BENCHFORGE_DATA_DIR=str(data_dir),
        CAMPAIGN_TICK_SECONDS="1",
        LINEAGE_LEASE_SECONDS="120",
        # The model server of this rehearsal listens on loopback: allowed explicitly, as a
        # deployment with a model server on the same machine does (docs/security.md).
        ENDPOINT_ALLOWED_PRIVATE_NETWORKS="127.0.0.0/8,::1/128",
    )
    return env


def _wait_http(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"{url} did not answer 200 within {timeout} s")


def _stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def test_the_installed_wheel_runs_a_campaign_on_gunicorn_and_two_workers(
    installed, database, tmp_path
):
    bin_dir = installed
    home = tmp_path / "home"  # started outside the source tree: only the install is importable
    home.mkdir()
    env = _app_env(database=database, data_dir=tmp_path / "data")
    benchforge = [str(bin_dir / "benchforge")]

    where = _run(
        [str(bin_dir / "python"), "-c", "import benchapp, evolution; print(evolution.__file__)"],
        env=env,
        cwd=home,
    ).stdout.strip()
    assert "site-packages" in where and not where.startswith(str(ROOT)), where

    _run(benchforge + ["migrate", "--noinput"], env=env, cwd=home)
    deploy = _run(benchforge + ["check", "--deploy"], env=env, cwd=home)
    assert "System check identified" in deploy.stdout + deploy.stderr
    _run(benchforge + ["collectstatic", "--noinput"], env=env, cwd=home)
    # The project-wide templates/ and static/ come from the wheel's packaged copy (the lines
    # are marked: the shell may print its own, such as how many objects it imported).
    out = _run(
        benchforge
        + [
            "shell",
            "-c",
            "from django.template.loader import get_template as t; "
            "from django.conf import settings as s; "
            "print('TEMPLATE', t('base.html').origin.name); "
            "print('STATIC', s.STATIC_ROOT / 'css' / 'app.css')",
        ],
        env=env,
        cwd=home,
    ).stdout
    layout = dict(
        line.split(" ", 1) for line in out.splitlines() if line.startswith(("TEMPLATE ", "STATIC "))
    )
    assert layout["TEMPLATE"].endswith("site-packages/benchforge_templates/base.html"), out
    assert Path(layout["STATIC"]).is_file(), out
    made = _run(benchforge + ["create_user", "ops", "--role", "admin"], env=env, cwd=home)
    assert "admin ops ready. password:" in made.stdout
    _run(benchforge + ["create_user", "cora", "--role", "curator"], env=env, cwd=home)
    token = _run(benchforge + ["create_token", "ops", "--name", "rehearsal"], env=env, cwd=home)
    token = token.stdout.strip()
    assert token.startswith("bf_")
    _run(benchforge + ["import_seeds", "humaneval"], env=env, cwd=home)
    exported = home / "humaneval.jsonl"
    _run(
        benchforge + ["export_problems", "--set", "humaneval", "--out", str(exported)],
        env=env,
        cwd=home,
    )

    port = _free_port()
    procs: list[subprocess.Popen] = []

    # The install's commands come first on PATH, as in the image.
    run_env = {**env, "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"}

    def start(cmd: list[str], name: str) -> None:
        log = open(tmp_path / f"{name}.log", "w")  # noqa: SIM115 - closed with the process
        procs.append(
            subprocess.Popen(
                cmd,
                env=run_env,
                cwd=home,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )

    with FakeOpenAI() as server:
        server.responder = KeyedResponder(pack.responses())
        try:
            # The compose file's own commands, with the container's address and host name
            # replaced by this machine's loopback port and a node name per worker.
            services = compose_commands()
            start(
                ["sh", "-c", services["web"].replace("0.0.0.0:8000", f"127.0.0.1:{port}")],
                "web",
            )
            start(shlex.split(services["worker"]) + ["-n", "models@%h"], "worker")
            start(shlex.split(services["sandbox-worker"]) + ["-n", "sandbox@%h"], "sandbox-worker")
            base = f"http://127.0.0.1:{port}"
            _wait_http(f"{base}/healthz", timeout=240)

            api = httpx.Client(
                base_url=f"{base}/api", headers={"Authorization": f"Bearer {token}"}, timeout=30
            )
            imported = campaign_flow.import_pack(
                api, campaign_flow.humaneval_seed_lines(exported.read_text(encoding="utf-8"))
            )
            # The pack's own seeds are new; the HumanEval ones exist already (re-import
            # creates nothing).
            assert imported["created"] == len(pack.SEEDS_FILE.read_text().splitlines())
            campaign_id = campaign_flow.launch_campaign(
                api, model_base_url=server.base_url, name="rehearsal"
            )
            state = campaign_flow.wait_for_end(api, campaign_id)
            logs = {p.name: p.read_text()[-3000:] for p in tmp_path.glob("*.log")}
            assert state and state["state"] == "completed", (state, logs)
            assert api.get(f"/campaigns/{campaign_id}/progress").status_code == 200
        finally:
            _stop(procs)

    # The outcomes, read from the rehearsal's own database.
    with psycopg.connect(database) as conn:
        rows = conn.execute(
            campaign_flow.DECISIONS_SQL.format(campaign=int(campaign_id))
        ).fetchall()
        workers = conn.execute(
            "SELECT count(*) FROM evolution_llmcall WHERE campaign_id = %s", (campaign_id,)
        ).fetchone()[0]
    campaign_flow.assert_expected_decisions(campaign_flow.decided(rows))
    assert workers > 0
    # Both workers did their share: model-bound steps on one, sandboxed execution on the other.
    for name in ("worker", "sandbox-worker"):
        log = (tmp_path / f"{name}.log").read_text()
        assert re.search(r"Task \S+\[[0-9a-f-]+\] succeeded", log), (name, log[-2000:])
