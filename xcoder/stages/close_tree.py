"""Stage ``close_tree``: the evolved tree's counts are recorded; tasks are sampled from it next."""

from __future__ import annotations

from ..models import XcoderCampaign
from .common import Action, Ctx, category_counts


def act_close_tree(ctx: Ctx, action: Action) -> None:
    counts = category_counts(ctx.xc)
    # An empty tree still closes (with zero counts): planning then rejects every task visibly.
    XcoderCampaign.objects.filter(pk=ctx.xc.pk).update(counts_evolved=counts or {"(none)": 0})
