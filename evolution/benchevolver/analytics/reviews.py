"""Where the review-based charts read per-problem review aggregates from.

Review sits above the engine, so the engine never imports it. The project composes them at the
top: ``benchapp/urls.py`` passes review's ``ReviewAggregates`` (``review.analytics``) to the
evolution URLs, whose chart views hand it to the selectors. Without one (the evolution URLs
included on their own) nothing is reviewed: empty aggregates, no review columns in the
fingerprint.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ReviewAggregates:
    # ``aggregates(*problem_ids)`` -> {problem pk: {"clarity", "novelty", "difficulty",
    # "quality", "cf_rating", "validity", "n_reviews", "tags": [...]}}; each argument an
    # iterable of pks or a ``values()`` queryset of them.
    aggregates: Callable[..., dict[int, dict]]
    # ``fingerprint()`` -> {name: expression}: subqueries that change whenever a review, an
    # override or a tag merge changes; added to the campaign's fingerprint query. Each name
    # starts with ``fp_`` so that ``selectors.fingerprint`` reads it.
    fingerprint: Callable[[], dict]
