"""The tool-based test generator (D.2) run in the sandbox: CYaRon shipped with the program, the
test files it writes brought back framed, each kept inline or in a file (``testfiles``)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from django.conf import settings

from evolution import sandbox
from evolution.llm.parsing import ParseError
from evolution.streams.errors import SandboxFailure

from ..engine import cyaron, prompts
from .common import Ctx
from .testfiles import keep

MB = 1_000_000


def generator_limits(ctx: Ctx) -> sandbox.Limits:
    """The generator's run: the campaign's time, an output cap of ``generator_output_mb``
    (every test file it writes, framed, comes back on stdout), and memory for the program
    (the campaign's, at least 1 GB) plus that cap and one test more: its files in the sandbox's
    /tmp and its stdout (a memory file the sandbox streams out once it ends) are memory counted
    to the sandbox."""
    s = ctx.settings
    return sandbox.Limits(
        time_s=max(s.execution_timeout, 30.0),
        memory_mb=max(s.memory_mb, 1024) + s.generator_output_mb + s.max_test_mb,
        max_output_bytes=s.generator_output_mb * MB + 64 * 1024,
    )


def _file_name(ordinal: int, name: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:80] or "case.in"
    return f"{ordinal:03d}-{safe}"


def run_generator(ctx: Ctx, task, code: str) -> tuple[list[dict], list[str]]:
    """Run the model's generator with ``--seed``; (tests, errors). Each test is
    ``{"category", "description", "source": "generator", "seed", "file_name"}`` with its input
    inline or in a file. A test file above ``max_test_mb`` is dropped with a note.

    The run's output goes from the sandbox into a temporary file under the data directory
    (removed afterwards) and its frames are read back one at a time: memory here holds one test
    file, not the run."""
    s = ctx.settings
    scratch = Path(settings.DATA_DIR) / "xcoder" / "tmp"
    scratch.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(
        prefix=f"generator-c{ctx.campaign.pk}-t{task.index}-", suffix=".out", dir=scratch
    )
    os.close(handle)
    path = Path(name)
    try:
        outcome = sandbox.run_to_file(
            cyaron.generator_program(code),
            "",
            path,
            harness="stdio",
            limits=generator_limits(ctx),
            argv=["--seed", str(s.generator_seed)],
        )
        if outcome.status == "SE":
            raise SandboxFailure(outcome.stderr[-300:])
        if outcome.status != "OK":
            what = "wrote more than generator_output_mb" if outcome.status == "OLE" else ""
            return [], [
                f"generator {outcome.status} with --seed {s.generator_seed}: {what}"
                f"{outcome.stderr[-300:]}".strip()
            ]
        return _read_tests(ctx, task, path)
    finally:
        path.unlink(missing_ok=True)


def _read_tests(ctx: Ctx, task, path: Path) -> tuple[list[dict], list[str]]:
    """The tests of a generator run's framed output in ``path``, a frame at a time."""
    s = ctx.settings
    tests: list[dict] = []
    errors: list[str] = []
    try:
        for kind, name, size, text in cyaron.frames_in_file(path, max_chars=s.max_test_mb * MB):
            where = f"test file {name}" if kind == "case" else "printed output"
            if text is None:
                errors.append(f"{where} dropped: {size:,} characters > max_test_mb")
                continue
            if kind == "stdout":
                # No test file written: the program printed the JSON test_cases object.
                cases = prompts.parse_test_cases(text, harness=task.harness)
                for case in cases:
                    tests.append(
                        {**case, "source": "generator", "seed": s.generator_seed, "file_name": ""}
                    )
                continue
            try:
                text = cyaron.check_input(text, harness=task.harness, where=where)
            except ParseError as exc:
                errors.append(str(exc))
                continue
            stored = keep(ctx.campaign.pk, task.index, _file_name(len(tests), name), text)
            del text
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
    return tests, errors
