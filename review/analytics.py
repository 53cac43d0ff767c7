"""Per-problem review aggregates for the engine's charts: the project's URLconf passes these
two functions to the evolution URLs (``benchapp/urls.py``; the engine never imports review,
and review imports nothing of BenchEvolver).

The review app aggregates per round (``review.selectors.round_item_aggregates``); a campaign's
problems may be spread over several rounds, so this reads the same rows for a set of problems
at once, with the same rules: each rating is the mean of the submitted reviews, tags are the
union of canonical tags (merged tags followed to their target), validity is the majority vote
(ties go to "invalid"), and the newest curator override of a dimension wins. Four queries
whatever the number of problems (one when none of them is reviewed); an empty dict when
nothing about these problems is reviewed.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from django.db.models import F, Func, Q, QuerySet, Subquery

from .models import Review, ScoreOverride, Tag

DIMENSIONS = ("clarity", "novelty", "difficulty", "quality")


def review_fingerprint_annotations() -> dict:
    """Subquery expressions that change whenever a review is saved or submitted, a curator
    overrides a score or a tag is merged; the selectors add them to the campaign's fingerprint
    query (same statement) for review-based charts."""

    def newest(qs, field):
        return Subquery(qs.order_by(f"-{field}").values(field)[:1])

    return {
        "fp_review_updated": newest(Review.objects.all(), "updated_at"),
        "fp_review_submitted": newest(
            Review.objects.filter(submitted_at__isnull=False), "submitted_at"
        ),
        # COUNT without GROUP BY: deleting a review also changes the key.
        "fp_review_count": Subquery(
            Review.objects.order_by().values(n=Func(F("id"), function="COUNT"))[:1]
        ),
        "fp_override": newest(ScoreOverride.objects.all(), "id"),
        "fp_tag_merge": newest(Tag.objects.filter(status="merged"), "id"),
    }


def problem_review_aggregates(*problem_ids) -> dict[int, dict]:
    """{problem pk: {"clarity", "novelty", "difficulty", "quality", "cf_rating", "validity",
    "n_reviews", "tags": [...]}} for the problems with at least one submitted review.

    Each argument names problems: an iterable of pks or a ``values()`` queryset of them
    (used as a subquery)."""
    sources = [s if isinstance(s, QuerySet) else list(s) for s in problem_ids]
    sources = [s for s in sources if isinstance(s, QuerySet) or s]
    if not sources:
        return {}
    in_problems = Q()
    for source in sources:
        in_problems |= Q(item__problem_id__in=source)
    reviews = list(
        Review.objects.filter(in_problems, submitted_at__isnull=False).values_list(
            "id", "item__problem_id", *DIMENSIONS, "cf_rating", "validity"
        )
    )
    if not reviews:
        return {}
    review_problem = {r[0]: r[1] for r in reviews}
    tag_links = list(
        Review.tags.through.objects.filter(review_id__in=list(review_problem)).values_list(
            "review_id", "tag_id"
        )
    )
    tags = {
        pk: (name, merged)
        for pk, name, merged in Tag.objects.values_list("id", "name", "merged_into_id")
    }
    overrides = list(
        ScoreOverride.objects.filter(in_problems)
        .order_by("created_at", "id")
        .values_list("item__problem_id", "dimension", "value")
    )

    def canonical(tag_id: int) -> str | None:
        seen = set()
        while tag_id in tags and tags[tag_id][1] and tag_id not in seen:
            seen.add(tag_id)
            tag_id = tags[tag_id][1]
        return tags[tag_id][0] if tag_id in tags else None

    values: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for _, pid, *numbers, validity in reviews:
        bucket = values[pid]
        bucket["n"].append(1)
        for dim, value in zip((*DIMENSIONS, "cf_rating"), numbers, strict=True):
            if value is not None:
                bucket[dim].append(value)
        if validity:
            bucket["validity"].append(validity)
    tag_sets: dict[int, set[str]] = defaultdict(set)
    for review_id, tag_id in tag_links:
        name = canonical(tag_id)
        if name:
            tag_sets[review_problem[review_id]].add(name)
    out: dict[int, dict] = {}
    for pid, bucket in values.items():
        agg: dict = {
            dim: round(statistics.fmean(bucket[dim]), 3) if bucket[dim] else None
            for dim in (*DIMENSIONS, "cf_rating")
        }
        votes = defaultdict(int)
        for v in bucket["validity"]:
            votes[v] += 1
        agg["validity"] = max(votes, key=lambda v: (votes[v], v == "invalid")) if votes else None
        agg["n_reviews"] = len(bucket["n"])
        agg["tags"] = sorted(tag_sets.get(pid, ()))
        out[pid] = agg
    for pid, dimension, value in overrides:  # oldest first: the newest is applied last
        if pid not in out:
            continue
        if dimension == "validity":
            out[pid]["validity"] = value
        else:
            try:
                out[pid][dimension] = float(value)
            except ValueError:
                continue
    return out
