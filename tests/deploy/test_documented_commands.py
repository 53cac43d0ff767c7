"""Every command line that README.md and docs/*.md show in a ```sh block is run here.

Each line is matched by one rule below; a documented line that no rule runs fails
``test_every_documented_command_is_run``, so a new command cannot enter the docs untested.
Management commands run at least with ``--help``; the flows a newcomer follows (users, seed
import and export, the judge, the batch judge, creating and following a campaign on a real
Celery worker) run for real, exactly as printed, against the test database.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from tests.deploy.compose import PLACEHOLDERS, compose_command
from tests.support.fake_openai import FakeOpenAI
from tests.support.workers import kill_group, start_worker, worker_env

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LCB_SAMPLE = ROOT / "tests" / "evolution" / "importers" / "data" / "lcb_sample.jsonl"


def documented_lines() -> list[tuple[str, str]]:
    """(where, command) for every command line of every ```sh block."""
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for block in re.finditer(r"```sh\n(.*?)```", text, re.S):
            for line in block.group(1).splitlines():
                command = _strip_comment(line).strip()
                if command:
                    found.append((doc.relative_to(ROOT).as_posix(), command))
    return found


def _strip_comment(line: str) -> str:
    """The command without a trailing `# comment` (a # inside quotes stays)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=False)
    lexer.commenters = "#"
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        return line
    if not words:
        return ""
    # Keep the original spelling up to the comment.
    cut = line.find(" #")
    while cut != -1:
        head = line[:cut]
        try:
            if shlex.split(head, comments=False) == words:
                return head
        except ValueError:
            pass
        cut = line.find(" #", cut + 1)
    return line


def _words(command: str) -> list[str]:
    return shlex.split(command)


def _manage(words: list[str]) -> list[str] | None:
    """`python manage.py X …` or `benchforge X …` as an argv for this interpreter."""
    if words[:2] == ["python", "manage.py"]:
        return [sys.executable, str(ROOT / "manage.py"), *words[2:]]
    if words[:1] == ["benchforge"]:
        return [sys.executable, "-m", "benchapp", *words[1:]]
    return None


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.setdefault("DJANGO_SETTINGS_MODULE", "benchapp.settings")
    return env


def _run(argv, *, cwd=ROOT, env=None, timeout=300, input=None) -> subprocess.CompletedProcess:
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=env or _env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input,
    )
    assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


# --- rules: each returns True when it ran the line -------------------------------------------


def rule_make(words: list[str]) -> bool:
    # `make test` is this very run and `make demo` serves until stopped: check that make knows
    # the target and what it would run, without recursing into it.
    if words[0] != "make":
        return False
    out = _run(["make", "-n", *words[1:]])
    if words[1] in ("demo", "test"):
        assert "scripts/bootstrap.sh" in out.stdout, out.stdout
    return True


def rule_printf(words: list[str], command: str, tmp: Path) -> bool:
    # A file a documented session writes before using it (run as a whole script in the test
    # of that session); here: it runs and writes where it says.
    if words[0] != "printf":
        return False
    target = command.rsplit(">", 1)[1].strip()
    local = tmp / Path(target).name
    _run(["bash", "-c", command.replace(target, str(local))])
    assert local.exists()
    return True


def rule_manage_help(words: list[str]) -> bool:
    argv = _manage(words)
    if argv is None:
        return False
    command = next(w for w in argv[2:] if not w.startswith("-") and w != "benchapp")
    prefix = argv[: argv.index(command) + 1]
    out = _run([*prefix, "--help"])
    assert "usage:" in out.stdout
    return True


def rule_evosyn_ablation(words: list[str]) -> bool:
    """docs/evosyn.md's ablation over the demo: here its options are checked against the
    command's --help; ``test_the_documented_evosyn_ablation_runs_on_the_demo`` runs the line as
    printed on the test database and reads what it stored."""
    argv = _manage(words)
    if argv is None or "evosyn_ablation" not in words:
        return False
    out = _run([*argv[: argv.index("evosyn_ablation") + 1], "--help"])
    for option in (w for w in words if w.startswith("--")):
        assert option in out.stdout, f"evosyn_ablation has no {option}"
    return True


def rule_screening_index(words: list[str]) -> bool:
    """docs/screening.md's index command: here its options are checked against the command's
    --help; ``test_the_documented_screening_index_runs`` runs the line as printed against a
    database holding HumanEval."""
    argv = _manage(words)
    if argv is None or "screening_index" not in words:
        return False
    out = _run([*argv[: argv.index("screening_index") + 1], "--help"])
    for option in (w for w in words if w.startswith("--")):
        assert option in out.stdout, f"screening_index has no {option}"
    return True


def rule_celery_worker(words: list[str]) -> bool:
    if words[:4] != ["celery", "-A", "benchapp", "worker"]:
        return False
    # The documented options parse and the app loads; the worker's real runs are in the suite.
    argv = [sys.executable, "-m", "celery", *words[1:]]
    argv = [a if a != "$(nproc)" else str(os.cpu_count()) for a in argv]
    out = _run([*argv, "--help"], env={**_env(), **worker_env()})
    assert "Usage:" in out.stdout
    return True


def rule_export(words: list[str], command: str) -> bool:
    if words[0] != "export":
        return False
    name = command.split("=", 1)[0].split()[1]
    out = _run(["bash", "-c", f'{command} && printf %s "${name}"'])
    assert len(out.stdout) >= 24, f"{name} came out empty or short: {out.stdout!r}"
    return True


def rule_docker(words: list[str], command: str) -> bool:
    """Docker lines. Those tests/deploy/test_compose_stack.py runs exactly as printed on a real
    engine (docs/deployment.md's "Without an image registry" block, and machine A's half of the
    two-machine layout) are that test's; any other `docker compose` line must interpolate and
    be made of a subcommand and options Compose v2 knows."""
    from tests.deploy.test_compose_stack import VERBATIM, rehearsed_commands

    if words[0] not in ("docker", "deploy/images/build.sh"):
        return False
    if command in rehearsed_commands() or command in VERBATIM:
        return True
    assert words[:2] == ["docker", "compose"], f"no rule runs this docker line: {command}"
    env = {**_env(), **PLACEHOLDERS}
    files: list[str] = []
    rest = words[2:]
    while rest and rest[0] == "-f":
        files += rest[:2]
        rest = rest[2:]
    _run([*compose_command(), *files, "config", "-q"], env=env)
    sub, rest = rest[0], rest[1:]
    inner: list[str] = []
    if sub in ("exec", "run"):
        # `exec SERVICE COMMAND…`: the command runs inside the image, which is this install.
        service = next(i for i, w in enumerate(rest) if not w.startswith("-"))
        assert rest[service] in _compose_services(env, files), rest[service]
        rest, inner = rest[:service], rest[service + 1 :]
    out = _run([*compose_command(), sub, "--help"], env=env)
    for option in (w for w in rest if w.startswith("--")):
        assert option.split("=")[0] in out.stdout, f"docker compose {sub} has no {option}"
    if inner:
        assert rule_manage_help(inner), f"no rule runs {shlex.join(inner)} inside the image"
    return True


def _compose_services(env, files) -> list[str]:
    out = _run([*compose_command(), *files, "config", "--services"], env=env)
    return out.stdout.split()


def run_documented(command: str, tmp: Path) -> None:
    words = _words(command)
    if rule_printf(words, command, tmp):
        return
    for rule in (
        rule_make,
        rule_evosyn_ablation,
        rule_screening_index,
        rule_manage_help,
        rule_celery_worker,
    ):
        if rule(words):
            return
    if rule_export(words, command) or rule_docker(words, command):
        return
    raise AssertionError(f"no rule runs this documented command: {command}")


@pytest.mark.parametrize(
    "where,command", documented_lines(), ids=[c[:60] for _, c in documented_lines()]
)
def test_every_documented_command_is_run(where, command, tmp_path):
    run_documented(command, tmp_path)


def test_the_docs_show_the_flows_a_newcomer_follows():
    shown = {command for _, command in documented_lines()}
    for needed in (
        "make demo",
        "make test",
        "python manage.py import_seeds humaneval",
    ):
        assert needed in shown
    assert any(c.startswith("python manage.py judge_batch --in") for c in shown)


# --- the real flows, exactly as documented ---------------------------------------------------


def _documented(prefix: str) -> list[str]:
    return [c for _, c in documented_lines() if c.startswith(prefix)]


def _db_env() -> dict[str, str]:
    return {**_env(), **worker_env()}


def _as_run(command: str) -> list[str]:
    argv = _manage(_words(command))
    assert argv is not None, command
    return argv


@pytest.mark.django_db(transaction=True)
def test_the_documented_seed_user_and_export_flows_run(tmp_path):
    env = _db_env()
    shutil.copy(LCB_SAMPLE, tmp_path / "test6.jsonl")
    for command in _documented("python manage.py create_user"):
        out = _run(_as_run(command), cwd=tmp_path, env=env)
        assert "ready. password:" in out.stdout
    first = _run(_as_run("python manage.py import_seeds humaneval"), cwd=tmp_path, env=env)
    assert "164" in first.stdout
    for command in _documented("python manage.py import_seeds lcb test6.jsonl"):
        out = _run(_as_run(command), cwd=tmp_path, env=env)
        assert "lcb-v6" in out.stdout
    for command in _documented("python manage.py export_problems --set humaneval"):
        _run(_as_run(command), cwd=tmp_path, env=env)
        lines = (tmp_path / "humaneval.jsonl").read_text().splitlines()
        assert len(lines) == 164 and json.loads(lines[0])["origin_dataset"] == "humaneval"
    # The hub sources' examples import the fixtures shipped in the tree, from its root.
    for command in _documented("python manage.py import_seeds "):
        words = _words(command)
        if len(words) > 4 and (ROOT / words[4]).is_file():
            out = _run(_as_run(command), cwd=ROOT, env=env)
            assert "with a reference solution" in out.stdout, out.stdout
    for command in _documented("python manage.py import_seeds jsonl humaneval.jsonl"):
        out = _run(_as_run(command), cwd=tmp_path, env=env)
        assert "unchanged" in out.stdout


@pytest.mark.django_db(transaction=True)
def test_the_documented_screening_index_runs(tmp_path):
    """docs/screening.md's command against a database holding HumanEval: it hashes every
    imported seed again (the import already indexed each) and prints the corpora."""
    env = _db_env()
    _run(_as_run("python manage.py import_seeds humaneval"), cwd=tmp_path, env=env)
    commands = _documented("python manage.py screening_index")
    assert commands
    for command in commands:
        out = _run(_as_run(command), cwd=tmp_path, env=env)
        if "--rebuild" in command:
            assert "rebuilt: 0 added, 0 updated, 164 unchanged, 0 removed" in out.stdout
        assert "index: 164 public problems: humaneval 164" in out.stdout, out.stdout


def _sh_blocks(doc: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", (ROOT / "docs" / doc).read_text(encoding="utf-8"), re.S)


def test_the_documented_judge_session_runs_as_printed(tmp_path):
    """docs/judge.md's block writes its files and judges them: run it as a script, with
    `python` meaning this interpreter, and check what it printed and wrote."""
    (block,) = [b for b in _sh_blocks("judge.md") if "manage.py judge " in b]
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "python").symlink_to(sys.executable)
    env = {**_env(), "PATH": f"{shim}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = _run(["bash", "-e", "-c", block], cwd=ROOT, env=env)
    verdicts = re.findall(r"^(AC|WA|RE|TLE|CE)\b", done.stdout, re.M)
    first = json.loads(done.stdout.splitlines()[0])  # the --json run
    assert first["verdict"] == "AC" and first["passed"] == 2
    assert verdicts == ["AC", "AC"], done.stdout
    written = re.search(r"--out (\S+)", block).group(1)
    results = [json.loads(line) for line in Path(written).read_text().splitlines()]
    assert [(r["id"], r["verdict"]) for r in results] == [("a", "AC")]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_documented_campaign_creation_follows_a_real_worker(tmp_path):
    from evolution.importers import import_seeds
    from evolution.models import ModelEndpoint, Panel, PanelMember

    (command,) = _documented("python manage.py run_campaign --create")
    words = _words(command)
    seed_set = words[words.index("--seed-set") + 1]
    import_seeds(source="lcb", path=str(LCB_SAMPLE), set_name=seed_set)
    with FakeOpenAI() as server:
        for name in (words[words.index("--evolver") + 1], "target"):
            ModelEndpoint.objects.create(
                name=name,
                provider="openai",
                base_url=server.base_url,
                model=name,
                concurrency_limit=4,
                timeout_s=10,
                max_retries=0,
            )
        panel = Panel.objects.create(name=words[words.index("--panel") + 1])
        PanelMember.objects.create(
            panel=panel, endpoint=ModelEndpoint.objects.get(name="target"), attempts=1
        )
        connection.close()
        worker = start_worker("docs")
        try:
            out = _run(_as_run(command), cwd=tmp_path, env=_db_env(), timeout=300)
        finally:
            kill_group(worker)
    assert re.search(r"campaign \d+: completed", out.stdout), out.stdout + out.stderr


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_documented_evosyn_ablation_runs_on_the_demo(tmp_path, personas):
    """The ablation line of docs/evosyn.md, exactly as printed: it builds the demo's EvoSyn
    campaign from its cassette, runs the M x N x K grid over its stored matrices and stores it,
    labelled replayed, for the campaign page."""
    from evolution.models import LLMCall
    from evosyn.models import Ablation

    (command,) = _documented("python manage.py evosyn_ablation")
    connection.close()
    out = _run(_as_run(command), cwd=tmp_path, env=_db_env(), timeout=600)
    ablation = Ablation.objects.get()
    esc = ablation.evosyn
    assert esc.campaign.name == "Demo: EvoSyn evolved test selection" and esc.campaign.replayed
    assert ablation.replayed and "replayed answers" in out.stdout
    # Every model answer came from the demo's cassette; the ablation itself asked none.
    assert LLMCall.objects.exclude(status="ok").count() == 0
    assert "no model call" in out.stdout
    cells = {(c["m"], c["n"], c["k"]): c for c in ablation.cells}
    assert cells[4, 4, 1]["usable"] == esc.instances.filter(status="kept").count() == 1
    assert cells[4, 4, 1]["score"] == esc.best_strategy.score
    assert f"Shown on /evosyn/{esc.pk}/#ablation" in out.stdout
    page = personas.curator.client.get(f"/evosyn/{esc.pk}/").content.decode()
    assert 'id="ablation-replayed"' in page and 'id="ablation-consistency"' in page
