"""Review aggregates per problem, across every review round, for the gate.

A problem may be reviewed in several rounds. Per problem: the mean of each rating over all
SUBMITTED reviews, the validity votes, and the canonical tags. A curator's score override
(``review.ScoreOverride``, which adjudication resolutions also create) on any of the
problem's group items replaces the aggregate; the newest override wins across rounds.
Validity: "invalid" if any reviewer said so, unless an override settled it.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from review.models import (
    RATING_DIMENSIONS,
    Adjudication,
    AdjudicationStatus,
    Review,
    ScoreOverride,
)


@dataclass
class ProblemReviews:
    n_reviews: int = 0
    means: dict[str, float | None] = field(default_factory=dict)
    final: dict[str, float | None] = field(default_factory=dict)
    validity_votes: dict[str, int] = field(default_factory=dict)
    validity: str | None = None
    overridden: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    cf_rating: float | None = None
    open_adjudications: int = 0

    @property
    def invalid(self) -> bool:
        return self.validity == "invalid"

    def to_dict(self) -> dict:
        return {
            "n_reviews": self.n_reviews,
            "means": self.means,
            "final": self.final,
            "validity_votes": self.validity_votes,
            "validity": self.validity,
            "overridden": self.overridden,
            "tags": self.tags,
            "cf_rating": self.cf_rating,
            "open_adjudications": self.open_adjudications,
        }


def _mean(values: list) -> float | None:
    return round(statistics.fmean(values), 3) if values else None


def problem_reviews(*, problem_ids: list[int]) -> dict[int, ProblemReviews]:
    """``ProblemReviews`` for every id in ``problem_ids`` (empty aggregates for unreviewed)."""
    by_problem: dict[int, list[Review]] = defaultdict(list)
    reviews = (
        Review.objects.filter(item__problem_id__in=problem_ids, submitted_at__isnull=False)
        .select_related("item")
        .prefetch_related("tags__merged_into")
    )
    for r in reviews:
        by_problem[r.item.problem_id].append(r)
    latest: dict[tuple[int, str], ScoreOverride] = {}
    overrides = ScoreOverride.objects.filter(item__problem_id__in=problem_ids).select_related(
        "item"
    )
    for o in overrides.order_by("-created_at", "-id"):
        latest.setdefault((o.item.problem_id, o.dimension), o)
    open_adj: dict[int, int] = defaultdict(int)
    for pid in Adjudication.objects.filter(
        item__problem_id__in=problem_ids, status=AdjudicationStatus.OPEN
    ).values_list("item__problem_id", flat=True):
        open_adj[pid] += 1

    out = {}
    for pid in problem_ids:
        rows = by_problem.get(pid, [])
        agg = ProblemReviews(n_reviews=len(rows), open_adjudications=open_adj[pid])
        agg.means = {
            d: _mean([getattr(r, d) for r in rows if getattr(r, d) is not None])
            for d in RATING_DIMENSIONS
        }
        agg.cf_rating = _mean([r.cf_rating for r in rows if r.cf_rating is not None])
        votes: dict[str, int] = defaultdict(int)
        for r in rows:
            if r.validity:
                votes[r.validity] += 1
        agg.validity_votes = dict(votes)
        if votes.get("invalid"):
            agg.validity = "invalid"
        elif votes:
            agg.validity = max(votes, key=lambda v: (votes[v], v))
        agg.final = dict(agg.means)
        for dim in (*RATING_DIMENSIONS, "cf_rating", "validity"):
            o = latest.get((pid, dim))
            if o is None:
                continue
            agg.overridden.append(dim)
            if dim == "validity":
                agg.validity = o.value
            elif dim == "cf_rating":
                agg.cf_rating = float(o.value)
            else:
                agg.final[dim] = float(o.value)
        # A merged tag counts as the tag it was merged into.
        agg.tags = sorted(
            {
                (t.merged_into.name if t.merged_into_id else t.name)
                for r in rows
                for t in r.tags.all()
            }
        )
        out[pid] = agg
    return out
