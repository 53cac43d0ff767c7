"""The tool-based test generator (D.2) run in the sandbox: CYaRon shipped with the program, the
test files it writes brought back framed, each kept inline or in a file (``testfiles``)."""

from __future__ import annotations

import re

from evolution import sandbox
from evolution.llm.parsing import ParseError
from evolution.streams.errors import SandboxFailure

from ..engine import cyaron, prompts
from .common import Ctx
from .testfiles import keep

MB = 1_000_000


def generator_limits(ctx: Ctx) -> sandbox.Limits:
    """The generator's run: the campaign's time and memory, and an output cap of
    ``generator_output_mb`` (every test file it writes, framed, comes back on stdout)."""
    s = ctx.settings
    return sandbox.Limits(
        time_s=max(s.execution_timeout, 30.0),
        memory_mb=max(s.memory_mb, 1024),
        max_output_bytes=s.generator_output_mb * MB + 64 * 1024,
    )


def _file_name(ordinal: int, name: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:80] or "case.in"
    return f"{ordinal:03d}-{safe}"


def run_generator(ctx: Ctx, task, code: str) -> tuple[list[dict], list[str]]:
    """Run the model's generator with ``--seed``; (tests, errors). Each test is
    ``{"category", "description", "source": "generator", "seed", "file_name"}`` with its input
    inline or in a file. A test file above ``max_test_mb`` is dropped with a note."""
    s = ctx.settings
    outcome = sandbox.run_batch(
        cyaron.generator_program(code),
        [""],
        harness="stdio",
        limits=generator_limits(ctx),
        argv=["--seed", str(s.generator_seed)],
    )[0]
    if outcome.status == "SE":
        raise SandboxFailure(outcome.stderr[-300:])
    if outcome.status != "OK":
        what = "wrote more than generator_output_mb" if outcome.status == "OLE" else ""
        return [], [
            f"generator {outcome.status} with --seed {s.generator_seed}: {what}"
            f"{outcome.stderr[-300:]}".strip()
        ]
    tests: list[dict] = []
    errors: list[str] = []
    cap = s.max_test_mb * MB
    stdout, outcome = outcome.stdout, None  # one copy of the run's output, released below
    try:
        for kind, name, text in cyaron.frames(stdout):
            if kind == "stdout":
                # No test file written: the program printed the JSON test_cases object.
                cases = prompts.parse_test_cases(text, harness=task.harness)
                for case in cases:
                    tests.append(
                        {**case, "source": "generator", "seed": s.generator_seed, "file_name": ""}
                    )
                continue
            where = f"test file {name}"
            if len(text) > cap:
                errors.append(f"{where} dropped: {len(text):,} characters > max_test_mb")
                continue
            try:
                text = cyaron.check_input(text, harness=task.harness, where=where)
            except ParseError as exc:
                errors.append(str(exc))
                continue
            stored = keep(ctx.campaign.pk, task.index, _file_name(len(tests), name), text)
            tests.append(
                {
                    **stored,
                    "category": cyaron.category_of_name(name),
                    "description": name,
                    "source": "generator",
                    "seed": s.generator_seed,
                    "file_name": name,
                }
            )
    except ParseError as exc:
        errors.append(f"generator output unparsable: {exc}")
    del stdout
    return tests, errors
