"""What review's pages show about releases, composed where releases live: review's round page
loads this library by name (``{% load releases_published %}``) instead of asking releases
through a lookup it registered, so the Python imports stay one way (releases > review)."""

from __future__ import annotations

from django import template

from releases.selectors import published_items_for_problems

register = template.Library()


@register.inclusion_tag("releases/published_warning.html")
def published_warning(review_round) -> dict:
    """The curator's warning that problems of ``review_round`` are published: reviewers can
    open them on public pages (origin and tags withheld while the round is blind, but the
    release's exported files still carry them). Nothing when none is."""
    problem_ids = review_round.groups.values_list("items__problem_id", flat=True)
    return {"published_problems": published_items_for_problems(problem_ids)}
