"""Stage ``write`` (task stage 2): the stylised statement, then the statement gates and the
near-duplicate check (pure logic in ``engine/gates.py``)."""

from __future__ import annotations

from evolution.judging import duplicates
from evolution.llm import mark_unparsable
from evolution.llm.parsing import ParseError

from ..engine import features as feat
from ..engine import gates, prompts
from ..models import SynthTask, TaskStatus
from .common import (
    Action,
    Ctx,
    ask_group,
    move_task,
    reject_task,
    seed_key,
    seed_problems,
)


def _ask(ctx: Ctx, task: SynthTask):
    messages, template = prompts.write_messages(
        style=task.style, selected_tree=task.selected_tree, strategy=task.integration_strategy
    )
    return ctx.chat(
        "xcoder_write",
        messages,
        template,
        key=f"task={task.index};write;style={task.style}",
    )


def act_write(ctx: Ctx, action: Action) -> None:
    """Stage 2 for the action's task and the selected tasks of its group, their calls side by
    side. The answers are applied in task order, so each statement's near-duplicate check
    sees the statements of the tasks before it (those of its group included)."""
    ask_group(ctx, action, TaskStatus.SELECTED, _ask, _apply)


def _apply(ctx: Ctx, task: SynthTask, result) -> None:
    """Stage 2: the statement in the task's style, then each statement gate and the
    near-duplicate check; the first failure is the rejection reason (all results are kept)."""
    s = ctx.settings
    try:
        written = prompts.parse_task(result.content, style=task.style)
    except ParseError as exc:
        mark_unparsable(result.call_id, str(exc))
        reject_task(task, "stage2_unparsable", str(exc))
        return
    task.title = written.title
    task.statement = written.question
    task.entry_point = written.entry_point
    task.starter_code = written.starter_code
    results = gates.run_gates(
        written.question,
        style=task.style,
        features=feat.selected_features(task.selected_tree),
        min_words=s.min_statement_words,
        min_samples=s.min_samples,
    )
    earlier = {
        f"task {t.index}": t.statement
        for t in SynthTask.objects.filter(xcoder=ctx.xc)
        .exclude(pk=task.pk)
        .exclude(statement="")
        .filter(
            status__in=[
                TaskStatus.WRITTEN,
                TaskStatus.TESTED,
                TaskStatus.SOLVED,
                TaskStatus.ACCEPTED,
                TaskStatus.DISCARDED,
            ]
        )
    }
    for seed in seed_problems(ctx.campaign):
        earlier[f"seed {seed_key(seed)}"] = seed.statement
    dup = duplicates.near_duplicate(written.question, earlier, s.near_duplicate_threshold)
    results.append(
        gates.GateResult(
            "near_duplicate",
            not dup.duplicate,
            f"closest: {dup.against or '-'} (similarity {dup.score:.2f}, threshold "
            f"{s.near_duplicate_threshold:g})",
        )
    )
    task.gate_results = [r.to_dict() for r in results]
    failed = next((r for r in results if not r.passed), None)
    if failed:
        reject_task(task, failed.gate, failed.detail)
        return
    move_task(task, TaskStatus.WRITTEN)
