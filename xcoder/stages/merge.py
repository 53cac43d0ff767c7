"""Stage ``merge``: every seed's extracted features merged into the campaign's feature tree."""

from __future__ import annotations

from django.db import transaction

from ..engine import features as feat
from ..models import (
    EvolutionStep,
    ExtractionStatus,
    FeatureExtraction,
    NodeOrigin,
    XcoderCampaign,
)
from .common import Action, Ctx, category_counts, store_nodes


@transaction.atomic
def act_merge(ctx: Ctx, action: Action) -> None:
    """Merge every extraction into one tree: features with the same normalised name under the
    same parent are one node (B.1, "merge features that share common traits")."""
    xc = XcoderCampaign.objects.select_for_update().get(pk=ctx.xc.pk)
    if xc.tree_merged:
        return
    for extraction in FeatureExtraction.objects.filter(xcoder=xc, status=ExtractionStatus.OK):
        for category, tree in feat.extraction_categories(extraction.features).items():
            store_nodes(
                xc,
                feat.node_specs(category, tree),
                origin=NodeOrigin.EXTRACTED,
                round_no=0,
                source=extraction.problem_id,
            )
    xc.counts_extracted = category_counts(xc)
    merge_seed_evolutions(xc)
    xc.tree_merged = True
    xc.save(update_fields=["tree_merged", "counts_extracted", "updated_at"])


def merge_seed_evolutions(xc: XcoderCampaign) -> None:
    """Evolve-then-merge: each seed's evolved tree (round by round, seed by seed) joins the
    merged tree; a node the tree already has (extracted, or evolved from another seed) is one
    node; a new one keeps its origin (depth or breadth) and round."""
    steps = EvolutionStep.objects.filter(
        xcoder=xc, problem__isnull=False, status=ExtractionStatus.OK
    ).order_by("round", "problem_id")
    for step in steps:
        depth = set(step.evolved.get("depth", []))
        breadth = set(step.evolved.get("breadth", []))
        for category, tree in step.evolved.get("tree", {}).items():
            specs = feat.node_specs(category, tree)
            for origin, paths in ((NodeOrigin.DEPTH, depth), (NodeOrigin.BREADTH, breadth)):
                store_nodes(
                    xc,
                    [spec for spec in specs if spec.path in paths],
                    origin=origin,
                    round_no=step.round,
                )
