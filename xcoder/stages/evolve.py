"""Stage ``evolve``: one category of the feature tree evolved in breadth and depth for one round."""

from __future__ import annotations

from django.db import transaction

from evolution.llm import fanout, mark_unparsable
from evolution.llm.parsing import ParseError

from ..engine import features as feat
from ..engine import prompts
from ..models import EvolutionStep, ExtractionStatus, FeatureNode, NodeOrigin, XcoderCampaign
from .common import Action, Ctx, fan_out_calls, raise_first, store_nodes, tree_categories


def category_tree(xc: XcoderCampaign, category: str) -> dict:
    """The category's subtree as nested display names (``{name: {...}}``)."""
    nodes = list(FeatureNode.objects.filter(xcoder=xc, category=category).order_by("depth"))
    children: dict[int | None, list[FeatureNode]] = {}
    for node in nodes:
        children.setdefault(node.parent_id, []).append(node)
    root = next((n for n in nodes if n.depth == 0), None)

    def build(node: FeatureNode) -> dict:
        return {c.name: build(c) for c in sorted(children.get(node.pk, []), key=lambda n: n.path)}

    return build(root) if root else {}


def _ask(ctx: Ctx, round_no: int, category: str):
    tree = category_tree(ctx.xc, category)
    messages, template = prompts.evolution_messages(category=category, tree=tree)
    return ctx.chat(
        "xcoder_evolve",
        messages,
        template,
        key=f"evolve;round={round_no};category={category}",
    )


def act_evolve(ctx: Ctx, action: Action) -> None:
    """One evolution call per category: the action's category and the round's next ones not
    evolved yet, side by side (a category's call reads only its own subtree). New nodes are
    stored with their origin (breadth or depth), category by category in the tree's order; each
    call is recorded so a rerun does not repeat it."""
    xc = ctx.xc
    evolved = set(
        EvolutionStep.objects.filter(xcoder=xc, round=action.round).values_list(
            "category", flat=True
        )
    )
    rest = [c for c in tree_categories(xc) if c not in evolved and c != action.category]
    categories = [action.category, *rest][: fanout.step_calls(ctx.generator_width())]
    outcomes = fan_out_calls(
        [lambda c=c: _ask(ctx, action.round, c) for c in categories], ctx.generator_width()
    )
    for category, result in zip(categories, outcomes, strict=True):
        if not isinstance(result, BaseException):
            _store(ctx, action.round, category, result)
    raise_first(outcomes)


def _store(ctx: Ctx, round_no: int, category: str, result) -> None:
    xc = ctx.xc
    with transaction.atomic():
        XcoderCampaign.objects.select_for_update().get(pk=xc.pk)
        if EvolutionStep.objects.filter(xcoder=xc, round=round_no, category=category).exists():
            return
        try:
            expanded = feat.evolved_category_tree(result.content, category)
        except ParseError as exc:
            mark_unparsable(result.call_id, str(exc))
            EvolutionStep.objects.create(
                xcoder=xc,
                round=round_no,
                category=category,
                status=ExtractionStatus.FAILED,
                reason=f"unparsable: {exc}"[:500],
            )
            return
        nodes = FeatureNode.objects.filter(xcoder=xc, category=category)
        existing = set(nodes.values_list("path", flat=True))
        leaves = set(nodes.filter(children__isnull=True).values_list("path", flat=True))
        diff = feat.evolution_diff(category, existing, leaves, expanded)
        added = {}
        for origin, specs in ((NodeOrigin.DEPTH, diff.depth), (NodeOrigin.BREADTH, diff.breadth)):
            added[origin] = store_nodes(xc, specs, origin=origin, round_no=round_no)
        EvolutionStep.objects.create(
            xcoder=xc,
            round=round_no,
            category=category,
            status=ExtractionStatus.OK,
            added_breadth=added[NodeOrigin.BREADTH],
            added_depth=added[NodeOrigin.DEPTH],
        )
