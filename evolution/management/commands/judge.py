"""Judge one program against a tests file (or a test program) in the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evolution.sandbox import TestSpec, judge
from evolution.sandbox.jobs import JobError, limits_from, tests_from_json
from evolution.sandbox.types import HARNESSES


class Command(BaseCommand):
    help = "Judge a program in the sandbox: stdio, function (LiveCodeBench) or assert (HumanEval)."

    def add_arguments(self, parser):
        parser.add_argument("--harness", choices=HARNESSES, required=True)
        parser.add_argument("--code", required=True, help="the program to judge (a file)")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--tests", help='LiveCodeBench tests JSON: [{"input", "output"}]')
        source.add_argument("--test-program", help="assert harness: a file defining check()")
        parser.add_argument("--entry-point", default="", help="function / method name")
        parser.add_argument("--time-limit", type=float, default=6.0, help="seconds per test")
        parser.add_argument("--memory-mb", type=int, default=512)
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args, **opts):
        code = _read(opts["code"], "--code")
        try:
            if opts["tests"]:
                raw = _read(opts["tests"], "--tests")
                try:
                    data = json.loads(raw)
                except ValueError as exc:
                    raise CommandError(f"--tests {opts['tests']}: not JSON ({exc})") from exc
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
            )
        except (JobError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        if opts["json"]:
            self.stdout.write(json.dumps(result.to_dict()))
            return
        self.stdout.write(f"{result.verdict}  {result.passed}/{result.total} passed")
        if result.compile_error:
            self.stdout.write(result.compile_error)
        for number, test in enumerate(result.tests, 1):
            line = f"  test {number}: {test.verdict} {test.time_ms:.1f} ms"
            self.stdout.write(line + (f"\n{test.diff}" if test.diff else ""))


def _read(path: str, flag: str) -> str:
    try:
        return Path(path).read_text()
    except OSError as exc:
        raise CommandError(f"{flag} {path}: {exc.strerror}") from exc
