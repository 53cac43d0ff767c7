"""Stage ``start_round``: a new round is opened over the current seed pool."""

from __future__ import annotations

from ..models import FrontierRound
from .common import Action, Ctx


def _start_round(ctx: Ctx, action: Action) -> None:
    pool = list(ctx.fc.seed_pool.problems.order_by("id").values_list("id", flat=True))
    if not pool:
        raise ValueError("the seed pool is empty")
    FrontierRound.objects.get_or_create(
        frontier=ctx.fc, number=ctx.fc.current_round, defaults={"pool": pool}
    )
