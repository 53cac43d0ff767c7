"""Stage ``tests``: test inputs, prompted and/or from a generator program run sandboxed."""

from __future__ import annotations

from evolution.judging import programs
from evolution.llm import mark_unparsable
from evolution.llm.parsing import ParseError

from ..engine import prompts
from ..models import SynthTask, TaskStatus
from . import generate
from .common import Action, Ctx, fan_out_calls, group_tasks, move_task, raise_first, reject_task
from .testfiles import digest_of


def _asks(ctx: Ctx, task: SynthTask) -> list[tuple[str, object]]:
    """The task's test calls, by source: the prompted tests (D.1) and/or the generator (D.2)."""
    s, harness = ctx.settings, task.harness
    asks = []
    if s.test_mode in ("prompt", "both"):
        messages, template = prompts.tests_messages(
            statement=task.statement, harness=harness, count=s.prompt_test_count
        )
        asks.append(
            (
                "prompt",
                lambda m=messages, t=template: ctx.chat(
                    "xcoder_tests",
                    m,
                    t,
                    key=f"task={task.index};tests",
                ),
            )
        )
    if s.test_mode in ("generator", "both"):
        messages, template = prompts.generator_messages(statement=task.statement, harness=harness)
        asks.append(
            (
                "generator",
                lambda m=messages, t=template: ctx.chat(
                    "xcoder_generator",
                    m,
                    t,
                    key=f"task={task.index};generator",
                ),
            )
        )
    return asks


def act_tests(ctx: Ctx, action: Action) -> None:
    """Test inputs for the action's task and the written tasks of its group: every task's test
    calls side by side, then each task's answers applied in task order."""
    tasks = group_tasks(ctx, action, TaskStatus.WRITTEN)
    asks = [(task, source, call) for task in tasks for source, call in _asks(ctx, task)]
    outcomes = fan_out_calls([call for _, _, call in asks], ctx.generator_width())
    for task in tasks:
        answers = {
            source: outcome
            for (t, source, _), outcome in zip(asks, outcomes, strict=True)
            if t.pk == task.pk
        }
        if not any(isinstance(a, BaseException) for a in answers.values()):
            _apply(ctx, task, answers)
    raise_first(outcomes)


def _apply(ctx: Ctx, task: SynthTask, answers: dict) -> None:
    """Test inputs: prompt-based (D.1) and/or a CYaRon generator program (D.2) run sandboxed
    with ``--seed`` (``generate``: its test files come back framed; large ones are kept in
    files). Both sources are recorded per test; duplicates are dropped."""
    s = ctx.settings
    harness = task.harness
    tests: list[dict] = []
    notes: list[str] = []
    generator_code = ""
    errors: list[str] = []
    if "prompt" in answers:
        result = answers["prompt"]
        try:
            cases = prompts.parse_test_cases(result.content, harness=harness)
            tests += [{**c, "source": "prompt"} for c in cases]
        except ParseError as exc:
            mark_unparsable(result.call_id, str(exc))
            errors.append(f"prompted tests unparsable: {exc}")
    if "generator" in answers:
        result = answers["generator"]
        try:
            generator_code = programs.parse_program(result.content, "test generator")
        except programs.ProgramMissing as exc:
            mark_unparsable(result.call_id, str(exc))
            errors.append(str(exc))
    if generator_code:
        cases, problems = generate.run_generator(ctx, task, generator_code)
        tests += cases
        errors += problems
    seen: set[str] = set()
    unique = []
    for test in tests:
        if digest_of(test) in seen:
            notes.append(f"duplicate input dropped ({test['source']}: {test['description']})")
            continue
        seen.add(digest_of(test))
        unique.append(test)
    task.refresh_from_db()
    if task.status != TaskStatus.WRITTEN:
        return
    task.tests = unique
    task.generator_code = generator_code
    task.generator_seed = s.generator_seed if generator_code else None
    task.test_notes = notes + errors
    if not unique:
        reject_task(task, "no_tests", "; ".join(errors) or "no test input was produced")
        return
    move_task(task, TaskStatus.TESTED)
