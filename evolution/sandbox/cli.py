"""The judge's command line: ``python manage.py judge`` and ``python manage.py judge_batch``.

``manage.py`` hands these two commands to ``main`` before Django is set up: the judge needs
the sandbox's own settings (``config.py``, read from the environment like every setting) and
nothing of the web project, so it starts in the time an interpreter takes, not the time
importing every app takes. The management commands of the same names (for ``call_command``)
share the arguments and the code below.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable

from . import config
from .types import HARNESSES, ISOLATION_MODES

JUDGE_HELP = (
    "Judge a program in the sandbox: stdio, function (LiveCodeBench) or assert (HumanEval)."
)
BATCH_HELP = (
    'Judge JSONL jobs {"id", "harness", "code", "tests" | "test_program", "entry_point", '
    '"time_limit", "memory_mb", "isolation"}; result lines come back in job order, each with '
    "the job's id."
)
COMMANDS = ("judge", "judge_batch")


class UsageError(Exception):
    """Bad arguments or input files; the message names the flag or the file and line."""


def add_judge_arguments(parser) -> None:
    parser.add_argument("--harness", choices=HARNESSES, required=True)
    parser.add_argument("--code", required=True, help="the program to judge (a file)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--tests", help='LiveCodeBench tests JSON: [{"input", "output"}]')
    source.add_argument("--test-program", help="assert harness: a file defining check()")
    parser.add_argument("--entry-point", default="", help="function / method name")
    parser.add_argument("--time-limit", type=float, default=6.0, help="seconds per test")
    parser.add_argument("--memory-mb", type=int, default=512)
    parser.add_argument(
        "--isolation", choices=ISOLATION_MODES, default=None, help="default SANDBOX_ISOLATION"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def add_batch_arguments(parser) -> None:
    parser.add_argument("--in", dest="source", required=True, help="jobs (JSONL)")
    parser.add_argument("--out", dest="target", required=True, help="results (JSONL)")
    parser.add_argument(
        "--workers", type=int, default=None, help="sandboxes at once (SANDBOX_MAX_PARALLEL)"
    )
    parser.add_argument(
        "--distributed",
        action="store_true",
        help="spread the jobs over every worker of the sandbox Celery queue (BROKER_KIND=redis)",
    )


def _read(path: str, flag: str) -> str:
    try:
        with open(path) as source:
            return source.read()
    except OSError as exc:
        raise UsageError(f"{flag} {path}: {exc.strerror}") from exc


def run_judge(opts: dict, write: Callable[[str], None], *, one_shot: bool = False) -> None:
    """Judge one program; ``write`` prints one line. ``one_shot``: the process ends after this
    (the command line), so its sandbox serves this one submission."""
    from .jobs import JobError, limits_from, tests_from_json
    from .service import get_backend, judge
    from .types import SandboxUnavailable, TestSpec

    try:
        backend = get_backend()
    except SandboxUnavailable:
        backend = None  # judge() reports it as the verdict SE
    if one_shot and hasattr(backend, "warm_factories"):
        backend.warm_factories = False
    code = _read(opts["code"], "--code")
    try:
        if opts.get("tests"):
            raw = _read(opts["tests"], "--tests")
            try:
                data = json.loads(raw)
            except ValueError as exc:
                raise UsageError(f"--tests {opts['tests']}: not JSON ({exc})") from exc
            tests = tests_from_json(data, where=f"--tests {opts['tests']}")
        else:
            tests = [TestSpec(input=_read(opts["test_program"], "--test-program"))]
        limits = limits_from(opts["time_limit"], opts["memory_mb"], where="limits")
        result = judge(
            code,
            tests,
            harness=opts["harness"],
            limits=limits,
            entry_point=opts["entry_point"],
            isolation=opts.get("isolation"),
            backend=backend,
        )
    except (JobError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    if opts["json"]:
        write(json.dumps(result.to_dict()))
        return
    write(f"{result.verdict}  {result.passed}/{result.total} passed")
    if result.compile_error:
        write(result.compile_error)
    for number, test in enumerate(result.tests, 1):
        line = f"  test {number}: {test.verdict} {test.time_ms:.1f} ms"
        write(line + (f"\n{test.diff}" if test.diff else ""))


def _start_sandboxes(count: int) -> None:
    """Start the sandboxes the batch will use while its jobs are parsed (a backend with a
    pool of warm factories: bwrap). Nothing is started for an empty batch or a backend that
    cannot be used: the jobs' verdicts say why."""
    from .backends import get_backend
    from .types import SandboxUnavailable

    try:
        backend = get_backend()
    except SandboxUnavailable:
        return
    if count > 0 and hasattr(backend, "prewarm"):
        backend.prewarm(count, wait=False)


def run_judge_batch(opts: dict, stderr) -> None:
    """Judge a JSONL file of jobs; results are written in job order as they become ready."""
    workers = opts.get("workers") or config.settings().SANDBOX_MAX_PARALLEL
    if workers < 1:
        raise UsageError("--workers must be at least 1")
    lines = _read(opts["source"], "--in").splitlines()
    numbered = [(n, line) for n, line in enumerate(lines, 1) if line.strip()]
    if not opts.get("distributed"):
        # Before the rest of the judge is imported: they start while it is.
        _start_sandboxes(min(workers, len(numbered)))

    from evolution.console import ProgressBar

    from .batch import JudgeJob, judge_many, result_to_dict
    from .jobs import JobError, parse_job

    parsed: list[tuple[object, JudgeJob | None, str]] = []
    for number, line in numbered:
        try:
            job = parse_job(line, where=f"{opts['source']}:{number}")
        except JobError as exc:
            try:
                job_id = json.loads(line).get("id")
            except (ValueError, AttributeError):
                job_id = None
            parsed.append((job_id, None, str(exc)))
            continue
        job_id = job.pop("id")
        parsed.append((job_id, JudgeJob(**job), f"{opts['source']}:{number}"))
    try:
        out = open(opts["target"], "w")  # noqa: SIM115 - closed in finally
    except OSError as exc:
        raise UsageError(f"--out {opts['target']}: {exc.strerror}") from exc
    from .service import set_max_parallel

    set_max_parallel(workers)
    progress = ProgressBar(stderr, label="judging")
    counts = {"done": 0, "AC": 0, "errors": 0}
    results = judge_many(
        (job for _, job, _ in parsed if job is not None),
        workers=workers,
        distributed=bool(opts.get("distributed")),
    )
    try:
        for job_id, job, where in parsed:
            if job is None:
                record = {"id": job_id, "error": where}
            else:
                record = {"id": job_id, **result_to_dict(next(results))}
                if "error" in record:
                    record["error"] = f"{where}: {record['error']}"
            # Written as each is ready, so an interrupted batch keeps its results.
            out.write(json.dumps(record) + "\n")
            out.flush()
            counts["done"] += 1
            counts["AC"] += record.get("verdict") == "AC"
            counts["errors"] += "error" in record
            progress.update(
                counts["done"], len(parsed), f"AC {counts['AC']} errors {counts['errors']}"
            )
    except ValueError as exc:  # a distributed batch without its broker
        raise UsageError(str(exc)) from exc
    finally:
        out.close()
        progress.close()
        set_max_parallel(config.settings().SANDBOX_MAX_PARALLEL)
    stderr.write(
        f"{counts['done']} job(s): {counts['AC']} AC, {counts['errors']} malformed; "
        f"results in {opts['target']}\n"
    )


def configure() -> None:
    """Read (and so check) the sandbox's settings from the environment, without Django."""
    config.settings()


def wants_light_start(argv: list[str]) -> bool:
    """Whether ``manage.py`` may hand ``argv`` (its arguments after the script) to ``main``.
    A distributed batch needs the project (Celery, Redis settings), so it starts with Django."""
    return bool(argv) and argv[0] in COMMANDS and "--distributed" not in argv


def _formatter(prog: str) -> argparse.HelpFormatter:
    """argparse's formatter, given the terminal width itself: argparse would import shutil
    (and with it bz2 and lzma) to ask, on every start."""
    try:
        width = os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError):
        width = int(os.environ["COLUMNS"]) if os.environ.get("COLUMNS", "").isdigit() else 80
    return argparse.HelpFormatter(prog, width=max(width, 40) - 2)


def run(argv: list[str]) -> None:
    """``manage.py judge|judge_batch``: ``main``, then the process ends without the
    interpreter's finalization (tearing down every module and object took ~10 ms of each
    judge_batch run). What the command leaves needs none of it: its output file is closed, its
    standard streams are flushed here, the pool's sandboxes are stopped here (the cgroups the
    kernel still holds are the janitor's), and its threads only served those sandboxes."""
    code = main(argv)
    try:
        from .backends import shutdown_pool

        shutdown_pool()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)  # never returns


def main(argv: list[str]) -> int:
    """``argv``: the command name and its arguments. Returns the exit status."""
    name, rest = argv[0], argv[1:]
    parser = argparse.ArgumentParser(
        prog=f"manage.py {name}",
        description=JUDGE_HELP if name == "judge" else BATCH_HELP,
        formatter_class=_formatter,
    )
    (add_judge_arguments if name == "judge" else add_batch_arguments)(parser)
    opts = vars(parser.parse_args(rest))
    try:
        try:
            configure()
        except Exception as exc:  # ImproperlyConfigured, naming the variable
            raise UsageError(str(exc)) from exc
        if name == "judge":
            run_judge(opts, lambda line: sys.stdout.write(line + "\n"), one_shot=True)
        else:
            run_judge_batch(opts, sys.stderr)
    except UsageError as exc:
        sys.stderr.write(f"CommandError: {exc}\n")
        return 1
    return 0
