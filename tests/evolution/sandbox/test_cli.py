"""``python manage.py judge`` / ``judge_batch`` as people run them: a process, no Django."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from django.conf import settings

from evolution.sandbox.cli import wants_light_start


def _manage(*args, env=None, importtime=False):
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run(
        [sys.executable, *flags, "manage.py", *args],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_the_judge_command_starts_without_importing_django_or_the_project(tmp_path):
    (tmp_path / "sol.py").write_text("print(int(input()) * 2)")
    (tmp_path / "tests.json").write_text(json.dumps([{"input": "2", "output": "4"}]))
    done = _manage(
        "judge",
        "--harness",
        "stdio",
        "--code",
        str(tmp_path / "sol.py"),
        "--tests",
        str(tmp_path / "tests.json"),
        "--json",
        importtime=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["verdict"] == "AC"
    imported = {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "evolution.sandbox.service" in imported  # the import log is really there
    heavy = {
        m for m in imported if m.split(".")[0] in ("django", "benchapp", "celery", "ninja", "httpx")
    }
    assert heavy == set()


def test_a_bad_sandbox_setting_is_a_clear_error_naming_the_variable(tmp_path):
    (tmp_path / "sol.py").write_text("print(1)")
    done = _manage(
        "judge",
        "--harness",
        "stdio",
        "--code",
        str(tmp_path / "sol.py"),
        "--test-program",
        str(tmp_path / "sol.py"),
        env={"SANDBOX_ISOLATION": "threads"},
    )
    assert done.returncode == 1
    assert "SANDBOX_ISOLATION must be one of fast, fork, got 'threads'" in done.stderr


def test_judge_batch_writes_results_in_job_order_with_their_ids(tmp_path):
    slow = "import time\ntime.sleep(0.5)\nprint(input())"
    jobs = [
        {"id": "slow", "code": slow, "tests": [{"input": "x", "output": "x"}]},
        {"id": "quick", "code": "print(input())", "tests": [{"input": "y", "output": "y"}]},
        {"id": "bad", "code": "print(1)"},
        {
            "id": "forked",
            "code": "import os\nprint(os.getpid())",
            "tests": [{"input": "", "output": "2"}, {"input": "", "output": "3"}],
            "isolation": "fork",
        },
    ]
    source = tmp_path / "jobs.jsonl"
    source.write_text("\n".join(json.dumps(j) for j in jobs) + "\n")
    target = tmp_path / "out.jsonl"
    done = _manage("judge_batch", "--in", str(source), "--out", str(target), "--workers", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    results = [json.loads(line) for line in target.read_text().splitlines()]
    assert [r["id"] for r in results] == ["slow", "quick", "bad", "forked"]
    assert [r.get("verdict") for r in results] == ["AC", "AC", None, "AC"]
    assert "jobs.jsonl:3" in results[2]["error"]


def test_only_a_distributed_batch_needs_the_project_to_start():
    assert wants_light_start(["judge", "--help"])
    assert wants_light_start(["judge_batch", "--in", "a", "--out", "b"])
    assert not wants_light_start(["judge_batch", "--in", "a", "--out", "b", "--distributed"])
    assert not wants_light_start(["migrate"])
    assert not wants_light_start([])


def test_judge_batch_ends_at_once_with_its_output_whole_and_leaves_no_sandbox_behind(tmp_path):
    # The command starts its sandboxes while it reads the jobs, and ends without the
    # interpreter's finalization (cli.run): its result file and standard streams are complete,
    # its exit status is the command's, and what its sandboxes leave is gone soon after.
    import time

    from evolution.sandbox import cgroups

    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text(
        "".join(
            json.dumps(
                {
                    "id": n,
                    "harness": "stdio",
                    "code": ("import time\ntime.sleep(1)\n" if n == 0 else "")
                    + "print(int(input()) * 2)",
                    "tests": [{"input": str(n), "output": str(2 * n)}],
                }
            )
            + "\n"
            for n in range(40)
        )
        + "not json\n"
    )
    out = tmp_path / "out.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "judge_batch",
            "--in",
            str(jobs),
            "--out",
            str(out),
            "--workers",
            "2",
        ],
        cwd=settings.BASE_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    prefix = f"{cgroups.PREFIX}{proc.pid}-"
    bases = [h.base for h in cgroups._hierarchies()]

    def ours() -> list[str]:
        return [name for base in bases for name in os.listdir(base) if name.startswith(prefix)]

    seen = []
    while proc.poll() is None and not seen:  # the first job sleeps: its sandbox is up a while
        seen = ours()
        time.sleep(0.01)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr[-2000:]
    assert bool(seen) == bool(bases)  # the run had cgroups of its own wherever they exist
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in lines] == [*range(40), None]
    assert all(r["verdict"] == "AC" for r in lines[:40]) and "error" in lines[40]
    assert stderr.rstrip().endswith(f"41 job(s): 40 AC, 1 malformed; results in {out}")
    deadline = time.monotonic() + 15
    while True:
        left = ours()
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    # A cgroup holding a process cannot be removed: none of the sandboxes' processes is left.
    assert left == []
