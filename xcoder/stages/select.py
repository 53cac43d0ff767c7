"""Stage ``select`` (task stage 1): the model picks roles, features and an integration strategy
from the sampled subtree."""

from __future__ import annotations

from evolution.llm import mark_unparsable
from evolution.llm.parsing import ParseError

from ..engine import features as feat
from ..engine import prompts
from ..models import SynthTask, TaskStatus
from .common import Action, Ctx, ask_group, move_task, reject_task


def _sampled_leaf_names(task: SynthTask) -> set[str]:
    names: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if not v:
                    names.add(feat.norm(k))
                walk(v)
        elif isinstance(node, list):
            names.update(feat.norm(x) for x in node if isinstance(x, str))

    walk(task.sampled_tree)
    return names


def _ask(ctx: Ctx, task: SynthTask):
    messages, template = prompts.select_messages(sampled_tree=task.sampled_tree)
    return ctx.chat(
        "xcoder_select",
        messages,
        template,
        key=f"task={task.index};select",
    )


def act_select(ctx: Ctx, action: Action) -> None:
    """Stage 1 for the action's task and the planned tasks of its group, their calls side by
    side; each answer is applied in task order."""
    ask_group(ctx, action, TaskStatus.PLANNED, _ask, _apply)


def _apply(ctx: Ctx, task: SynthTask, result) -> None:
    """Stage 1: annotate each leaf's potential use, select a compatible subset, state the
    integration strategy. A selection of features that were not sampled, or of too few, is a
    rejection with that reason."""
    try:
        selection = prompts.parse_selection(result.content)
    except ParseError as exc:
        mark_unparsable(result.call_id, str(exc))
        reject_task(task, "stage1_unparsable", str(exc))
        return
    chosen = feat.selected_features(selection.selected_tree)
    sampled = _sampled_leaf_names(task)
    unknown = [f for f in chosen if feat.norm(f) not in sampled]
    fields = dict(
        roles_tree=selection.roles_tree,
        selected_tree=selection.selected_tree,
        integration_strategy=selection.strategy,
    )
    if unknown:
        reject_task(
            task,
            "stage1_unknown_feature",
            "selected features that were not sampled: " + ", ".join(unknown),
            **fields,
        )
        return
    if len(set(map(feat.norm, chosen))) < ctx.settings.min_selected_features:
        reject_task(
            task,
            "stage1_too_few_features",
            f"{len(chosen)} feature(s) selected; at least "
            f"{ctx.settings.min_selected_features} are required",
            **fields,
        )
        return
    move_task(task, TaskStatus.SELECTED, **fields)
