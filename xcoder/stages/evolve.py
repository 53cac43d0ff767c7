"""Stage ``evolve``: one category of the feature tree evolved in breadth and depth for one round."""

from __future__ import annotations

from django.db import transaction

from evolution.llm import mark_unparsable
from evolution.llm.parsing import ParseError

from ..engine import features as feat
from ..engine import prompts
from ..models import EvolutionStep, ExtractionStatus, FeatureNode, NodeOrigin, XcoderCampaign
from .common import Action, Ctx, _store_nodes


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


def act_evolve(ctx: Ctx, action: Action) -> None:
    """One evolution call for one category: new nodes are stored with their origin (breadth or
    depth); the call is recorded so a rerun does not repeat it."""
    xc = ctx.xc
    tree = category_tree(xc, action.category)
    messages, template = prompts.evolution_messages(category=action.category, tree=tree)
    result = ctx.chat(
        xc.generator_endpoint,
        messages,
        role="xcoder_evolve",
        template=template,
        key=f"evolve;round={action.round};category={action.category}",
    )
    with transaction.atomic():
        XcoderCampaign.objects.select_for_update().get(pk=xc.pk)
        if EvolutionStep.objects.filter(
            xcoder=xc, round=action.round, category=action.category
        ).exists():
            return
        try:
            expanded = feat.evolved_category_tree(result.content, action.category)
        except ParseError as exc:
            mark_unparsable(result.call_id, str(exc))
            EvolutionStep.objects.create(
                xcoder=xc,
                round=action.round,
                category=action.category,
                status=ExtractionStatus.FAILED,
                reason=f"unparsable: {exc}"[:500],
            )
            return
        nodes = FeatureNode.objects.filter(xcoder=xc, category=action.category)
        existing = set(nodes.values_list("path", flat=True))
        leaves = set(nodes.filter(children__isnull=True).values_list("path", flat=True))
        diff = feat.evolution_diff(action.category, existing, leaves, expanded)
        added = {}
        for origin, specs in ((NodeOrigin.DEPTH, diff.depth), (NodeOrigin.BREADTH, diff.breadth)):
            added[origin] = _store_nodes(xc, specs, origin=origin, round_no=action.round)
        EvolutionStep.objects.create(
            xcoder=xc,
            round=action.round,
            category=action.category,
            status=ExtractionStatus.OK,
            added_breadth=added[NodeOrigin.BREADTH],
            added_depth=added[NodeOrigin.DEPTH],
        )
