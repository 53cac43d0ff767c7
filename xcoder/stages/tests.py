"""Stage ``tests``: test inputs, prompted and/or from a generator program run sandboxed."""

from __future__ import annotations

from evolution.benchevolver.engine import materialize
from evolution.llm import mark_unparsable
from evolution.llm.parsing import ParseError

from ..engine import prompts
from ..models import SynthTask, TaskStatus
from . import generate
from .common import Action, Ctx, _reject
from .testfiles import digest_of


def act_tests(ctx: Ctx, action: Action) -> None:
    """Test inputs: prompt-based (D.1) and/or a CYaRon generator program (D.2) run sandboxed
    with ``--seed`` (``generate``: its test files come back framed; large ones are kept in
    files). Both sources are recorded per test; duplicates are dropped."""
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
            generator_code = materialize.parse_generator(result.content)
        except Exception as exc:  # StageError: the answer holds no program
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
        _reject(task, "no_tests", "; ".join(errors) or "no test input was produced")
        return
    task.status = TaskStatus.TESTED
    task.save()
