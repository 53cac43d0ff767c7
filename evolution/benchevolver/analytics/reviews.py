"""Per-problem review aggregates for the review-based charts, from whichever app provides them.

Review sits above the engine, so the engine never imports it: the review app registers its
provider when it starts (``review.apps``) and the charts ask through these two functions.
Without a provider (the review app not installed) there is nothing reviewed: empty results.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ReviewProvider:
    # ``aggregates(*problem_ids)`` -> {problem pk: {"clarity", "novelty", "difficulty",
    # "quality", "cf_rating", "validity", "n_reviews", "tags": [...]}}; each argument an
    # iterable of pks or a ``values()`` queryset of them.
    aggregates: Callable[..., dict[int, dict]]
    # ``fingerprint()`` -> {name: expression}: subqueries that change whenever a review, an
    # override or a tag merge changes; added to the campaign's fingerprint query.
    fingerprint: Callable[[], dict]


_provider: ReviewProvider | None = None


def review_provider_register(provider: ReviewProvider | None) -> None:
    """Install (or, with None, remove) the review aggregates provider."""
    global _provider
    _provider = provider


def review_fingerprint_annotations() -> dict:
    return _provider.fingerprint() if _provider else {}


def problem_review_aggregates(*problem_ids) -> dict[int, dict]:
    return _provider.aggregates(*problem_ids) if _provider else {}
