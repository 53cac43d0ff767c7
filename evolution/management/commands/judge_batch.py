"""Judge many programs: JSONL jobs in, JSONL results out, a progress bar on stderr."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from evolution.management.commands._progress import ProgressBar
from evolution.sandbox import judge, set_max_parallel
from evolution.sandbox.jobs import JobError, parse_job


class Command(BaseCommand):
    help = (
        'Judge JSONL jobs {"id", "harness", "code", "tests" | "test_program", "entry_point", '
        '"time_limit", "memory_mb"}; each result line carries the job\'s id.'
    )

    def add_arguments(self, parser):
        parser.add_argument("--in", dest="source", required=True, help="jobs (JSONL)")
        parser.add_argument("--out", dest="target", required=True, help="results (JSONL)")
        parser.add_argument(
            "--workers", type=int, default=None, help="sandboxes at once (SANDBOX_MAX_PARALLEL)"
        )

    def handle(self, *args, **opts):
        workers = opts["workers"] or settings.SANDBOX_MAX_PARALLEL
        if workers < 1:
            raise CommandError("--workers must be at least 1")
        try:
            lines = Path(opts["source"]).read_text().splitlines()
        except OSError as exc:
            raise CommandError(f"--in {opts['source']}: {exc.strerror}") from exc
        jobs = [(n, line) for n, line in enumerate(lines, 1) if line.strip()]
        set_max_parallel(workers)
        progress = ProgressBar(self.stderr, label="judging")
        lock = threading.Lock()
        counts = {"done": 0, "AC": 0, "errors": 0}
        try:
            out = open(opts["target"], "w")  # noqa: SIM115 - closed in finally
        except OSError as exc:
            raise CommandError(f"--out {opts['target']}: {exc.strerror}") from exc
        try:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                futures = [pool.submit(_run_one, n, line, opts["source"]) for n, line in jobs]
                for future in as_completed(futures):
                    record = future.result()
                    with lock:
                        # Written as each finishes, so an interrupted batch keeps its results.
                        out.write(json.dumps(record) + "\n")
                        out.flush()
                        counts["done"] += 1
                        counts["AC"] += record.get("verdict") == "AC"
                        counts["errors"] += "error" in record
                        progress.update(
                            counts["done"],
                            len(jobs),
                            f"AC {counts['AC']} errors {counts['errors']}",
                        )
        finally:
            out.close()
            progress.close()
            set_max_parallel(settings.SANDBOX_MAX_PARALLEL)
        self.stderr.write(
            f"{counts['done']} job(s): {counts['AC']} AC, {counts['errors']} malformed; "
            f"results in {opts['target']}"
        )


def _run_one(number: int, line: str, source: str) -> dict:
    try:
        job = parse_job(line, where=f"{source}:{number}")
    except JobError as exc:
        try:
            job_id = json.loads(line).get("id")
        except (ValueError, AttributeError):
            job_id = None
        return {"id": job_id, "error": str(exc)}
    job_id = job.pop("id")
    try:
        result = judge(**job)
    except ValueError as exc:
        return {"id": job_id, "error": f"{source}:{number}: {exc}"}
    return {"id": job_id, **result.to_dict()}
