"""Demo content for `make demo`: a round with one group already rated by two reviewers (so
agreement and aggregates show), one group waiting in the demo reviewer's queue, and the problems
of the other kinds' demo campaigns (X-Coder, EvoSyn, FrontierSmith) in groups rated by both.

The ratings below are illustrative answers typed by the demo, labelled as such in each
justification; they are never mixed with real reviews (the round is named "Demo round").
"""

from __future__ import annotations

import random

from django.db import transaction

from evolution.models import Campaign, Problem
from evolution.models.campaigns import CampaignKind, CampaignState
from evolution.selectors import problem_kind_tags

from . import selectors, services
from .models import ReviewRound

DEMO_ROUND = "Demo round (illustrative ratings)"
# (clarity, novelty, difficulty, quality, cf) by lineage position, for the two reviewers.
_DEMO_RATINGS = {
    0: [(5, 2, 2, 4, 1100), (4, 2, 1, 4, 1000)],
    1: [(4, 3, 3, 4, 1700), (5, 3, 4, 4, 1900)],
    2: [(4, 4, 4, 4, 2100), (4, 3, 2, 3, 1800)],
    3: [(4, 4, 5, 5, 2400), (4, 5, 4, 4, 2300)],
}


def _demo_tags(problem) -> str:
    """Tags a reviewer would give: the tag the kind that made the problem gave it (an evolved
    problem's mutation family, already a tag of the vocabulary), else "implementation" (the
    demo's seeds are direct computations). Not tags by position, which named segment trees on
    a running sum."""
    if problem is None:
        return "implementation"
    return min(problem_kind_tags([problem.pk]).get(problem.pk, ()), default="implementation")


def _sources(limit: int) -> tuple[list, list[Problem]]:
    lineages = [
        lin
        for lin in selectors.lineage_choice_list()
        if len(selectors.lineage_problem_list(lineage=lin)) >= 2
    ][:limit]
    if len(lineages) >= limit:
        return lineages, []
    seeds = {selectors.lineage_problem_list(lineage=lin)[0].pk for lin in lineages}
    roots = [
        p
        for p in Problem.objects.filter(kind="seed", lineage_members__isnull=False).distinct()
        if p.pk not in seeds
    ][: limit - len(lineages)]
    return lineages, roots


def _other_kinds_groups(taken: set[int]) -> list[list[Problem]]:
    """The problems of every completed campaign of the other coding kinds, grouped without
    their seeds (a seed may already anchor a lineage group of the round)."""
    campaigns = Campaign.objects.filter(state=CampaignState.COMPLETED).exclude(
        kind__in=[CampaignKind.BENCHEVOLVER, CampaignKind.REASONING]
    )
    problems = [
        p for p in selectors.coding_problem_choice(campaigns=list(campaigns)) if p.pk not in taken
    ]
    groups, _ = selectors.coding_group_plan(problems=problems, include_seeds=False)
    return groups


@transaction.atomic
def review_demo_round(*, curator, reviewers: list) -> ReviewRound | None:
    """Create the demo round once (idempotent by name). Needs two reviewers and at least one
    lineage with an accepted problem; returns None when there is nothing to review yet."""
    existing = ReviewRound.objects.filter(name=DEMO_ROUND).first()
    if existing:
        return existing
    lineages, roots = _sources(2)
    if not lineages and not roots:
        return None
    taken = {p.pk for lin in lineages for p in selectors.lineage_problem_list(lineage=lin)}
    taken |= {p.pk for root in roots for p in selectors.root_problem_list(root=root)}
    kinds = _other_kinds_groups(taken)
    review_round = services.round_create(
        name=DEMO_ROUND,
        created_by=curator,
        reviewers=reviewers[:2],
        lineages=lineages,
        roots=roots,
        problem_groups=kinds,
        exclude_creators=False,
        instructions="Rate each problem on its own; the order inside a group is random.",
        rng=random.Random(2024),
    )
    groups = list(review_round.groups.order_by("position"))
    # The first lineage group and the other kinds' groups are rated; the second lineage group
    # waits in the demo reviewer's queue.
    n_lineage = len(lineages) + len(roots)
    for group in [groups[0], *groups[n_lineage:]]:
        _rate(group)
    return review_round


def _rate(group) -> None:
    for index, assignment in enumerate(group.assignments.order_by("reviewer__username")):
        data = {"certify_no_ai": "on"}
        for review in assignment.reviews.select_related("item__problem"):
            pos = review.item.lineage_position
            c, n, d, q, cf = _DEMO_RATINGS[pos][index % 2]
            prefix = review.item.opaque_id
            data.update(
                {
                    f"{prefix}-clarity": c,
                    f"{prefix}-novelty": n,
                    f"{prefix}-difficulty": d,
                    f"{prefix}-quality": q,
                    f"{prefix}-validity": "valid",
                    f"{prefix}-cf_rating": cf,
                    f"{prefix}-tags": _demo_tags(review.item.problem),
                    f"{prefix}-justification": "Demo rating (illustrative).",
                    f"{prefix}-elapsed": 60 + 30 * pos,
                }
            )
        services.assignment_submit(assignment=assignment, data={k: str(v) for k, v in data.items()})


def review_demo_hook(*, world, stdout, admin) -> None:
    """The demo's review round over the demo campaign's lineages: one group rated by both demo
    reviewers (agreement shows), one waiting in demo-reviewer's queue."""
    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    review_round = review_demo_round(
        curator=users.get(username="demo-curator"),
        reviewers=[users.get(username="demo-reviewer"), users.get(username="demo-reviewer-2")],
    )
    if review_round is not None:
        stdout.write(f"Review round '{review_round.name}' ready.")
