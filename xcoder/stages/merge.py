"""Stage ``merge``: every seed's extracted features merged into the campaign's feature tree."""

from __future__ import annotations

from django.db import transaction

from ..engine import features as feat
from ..models import ExtractionStatus, FeatureExtraction, NodeOrigin, XcoderCampaign
from .common import Action, Ctx, _store_nodes, category_counts


@transaction.atomic
def act_merge(ctx: Ctx, action: Action) -> None:
    """Merge every extraction into one tree: features with the same normalised name under the
    same parent are one node (B.1, "merge features that share common traits")."""
    xc = XcoderCampaign.objects.select_for_update().get(pk=ctx.xc.pk)
    if xc.tree_merged:
        return
    for extraction in FeatureExtraction.objects.filter(xcoder=xc, status=ExtractionStatus.OK):
        for category, tree in feat.extraction_categories(extraction.features).items():
            _store_nodes(
                xc,
                feat.node_specs(category, tree),
                origin=NodeOrigin.EXTRACTED,
                round_no=0,
                source=extraction.problem_id,
            )
    xc.tree_merged = True
    xc.counts_extracted = category_counts(xc)
    xc.save(update_fields=["tree_merged", "counts_extracted", "updated_at"])
