"""Stage ``tests``: test inputs, prompted and/or from a generator program run sandboxed."""

from __future__ import annotations

from evolution import sandbox
from evolution.judging import programs
from evolution.llm import mark_unparsable
from evolution.llm.parsing import ParseError
from evolution.streams.errors import SandboxFailure

from ..engine import prompts
from ..models import SynthTask, TaskStatus
from .common import Action, Ctx, _reject, move_task


def act_tests(ctx: Ctx, action: Action) -> None:
    """Test inputs: prompt-based (D.1) and/or a generator program (D.2) run sandboxed with
    ``--seed``. Both sources are recorded per test; duplicates are dropped."""
    s = ctx.settings
    task = SynthTask.objects.get(pk=action.task_id)
    harness = task.harness
    tests: list[dict] = []
    notes: list[str] = []
    generator_code = ""
    errors: list[str] = []
    if s.test_mode in ("prompt", "both"):
        messages, template = prompts.tests_messages(
            statement=task.statement, harness=harness, count=s.prompt_test_count
        )
        result = ctx.chat(
            ctx.xc.generator_endpoint,
            messages,
            role="xcoder_tests",
            template=template,
            key=f"task={task.index};tests",
        )
        try:
            cases = prompts.parse_test_cases(result.content, harness=harness)
            tests += [{**c, "source": "prompt"} for c in cases]
        except ParseError as exc:
            mark_unparsable(result.call_id, str(exc))
            errors.append(f"prompted tests unparsable: {exc}")
    if s.test_mode in ("generator", "both"):
        messages, template = prompts.generator_messages(statement=task.statement, harness=harness)
        result = ctx.chat(
            ctx.xc.generator_endpoint,
            messages,
            role="xcoder_generator",
            template=template,
            key=f"task={task.index};generator",
        )
        try:
            generator_code = programs.parse_program(result.content, "test generator")
        except programs.ProgramMissing as exc:
            mark_unparsable(result.call_id, str(exc))
            errors.append(str(exc))
        if generator_code:
            outcome = sandbox.run_batch(
                generator_code,
                [""],
                harness="stdio",
                limits=ctx.limits(),
                argv=["--seed", str(s.generator_seed)],
            )[0]
            if outcome.status == "SE":
                raise SandboxFailure(outcome.stderr[-300:])
            if outcome.status != "OK":
                errors.append(
                    f"generator {outcome.status} with --seed {s.generator_seed}: "
                    f"{outcome.stderr[-300:]}".strip()
                )
            else:
                try:
                    cases = prompts.parse_test_cases(outcome.stdout, harness=harness)
                    tests += [{**c, "source": "generator", "seed": s.generator_seed} for c in cases]
                except ParseError as exc:
                    errors.append(f"generator output unparsable: {exc}")
    seen: set[str] = set()
    unique = []
    for test in tests:
        if test["input"] in seen:
            notes.append(f"duplicate input dropped ({test['source']}: {test['description']})")
            continue
        seen.add(test["input"])
        unique.append(test)
    task.refresh_from_db()
    if task.status != TaskStatus.WRITTEN:
        return
    task.tests = unique
    task.generator_code = generator_code
    task.generator_seed = s.generator_seed if generator_code else None
    task.test_notes = notes + errors
    if not unique:
        _reject(task, "no_tests", "; ".join(errors) or "no test input was produced")
        return
    move_task(task, TaskStatus.TESTED)
