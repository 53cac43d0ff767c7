"""Stage ``plan``: a task is planned (its style and the subtree of features it samples)."""

from __future__ import annotations

import random

from django.db import IntegrityError, transaction

from ..config import STYLES
from ..engine import features as feat
from ..models import FeatureNode, SynthTask, TaskStatus, XcoderCampaign
from .common import Action, Ctx


def leaves_by_category(xc: XcoderCampaign) -> dict[str, list[tuple[str, ...]]]:
    nodes = list(FeatureNode.objects.filter(xcoder=xc))
    by_id = {n.pk: n for n in nodes}
    has_children = {n.parent_id for n in nodes if n.parent_id}
    result: dict[str, list[tuple[str, ...]]] = {}
    for node in nodes:
        if node.depth == 0 or node.pk in has_children:
            continue
        names = []
        cursor = node
        while cursor is not None and cursor.depth > 0:
            names.append(cursor.name)
            cursor = by_id.get(cursor.parent_id)
        result.setdefault(node.category, []).append(tuple(reversed(names)))
    for items in result.values():
        items.sort()
    return result


def choose_style(mix: dict, rng: random.Random) -> str:
    styles = [s for s in STYLES if mix.get(s, 0) > 0]
    return rng.choices(styles, weights=[mix[s] for s in styles])[0]


def act_plan(ctx: Ctx, action: Action) -> None:
    """Plan task ``index`` and the other tasks of its group not planned yet (``Ctx.task_group``)."""
    by_category = leaves_by_category(ctx.xc)
    planned = set(
        SynthTask.objects.filter(
            xcoder=ctx.xc, index__in=ctx.task_group(action.task_index)
        ).values_list("index", flat=True)
    )
    for index in ctx.task_group(action.task_index):
        if index == action.task_index or index not in planned:
            _plan(ctx, index, by_category)


def _plan(ctx: Ctx, index: int, by_category: dict) -> None:
    """Sample a subtree and a style for task ``index`` (deterministic in sample_seed and index)."""
    s = ctx.settings
    rng = random.Random(f"{s.sample_seed}:{index}")
    style = choose_style(s.style_mix, rng)
    picked = feat.sample_leaves(
        by_category, leaves=s.subtree_leaves, categories=s.subtree_categories, rng=rng
    )
    fields = {"style": style, "status": TaskStatus.PLANNED}
    category_of = {leaf: c for c, items in by_category.items() for leaf in items}
    grouped: dict[str, list[tuple[str, ...]]] = {}
    for leaf in picked:
        grouped.setdefault(category_of[leaf], []).append(leaf)
    fields["sampled_tree"] = {c: feat.nested(leaves) for c, leaves in sorted(grouped.items())}
    if len(picked) < s.min_selected_features:
        fields.update(
            status=TaskStatus.REJECTED,
            reason_code="tree_too_small",
            reason=f"the tree offers {len(picked)} leaf feature(s); "
            f"min_selected_features is {s.min_selected_features}",
        )
    try:
        with transaction.atomic():
            SynthTask.objects.create(xcoder=ctx.xc, index=index, **fields)
    except IntegrityError:
        pass  # made by an earlier attempt of this step: never a duplicate
