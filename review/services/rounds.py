"""Rounds, groups and assignments: creating a round from group sources, assigning reviewers,
opening and closing it.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count

from evolution.models import Campaign, Problem
from evolution.selectors import campaign_problems

from .. import selectors
from ..models import (
    Assignment,
    GroupItem,
    GroupKind,
    Review,
    ReviewGroup,
    ReviewRound,
)

MIN_GROUP, MAX_GROUP = 2, 4

_system_random = random.SystemRandom()


@dataclass(frozen=True)
class GroupSource:
    """What a group is built from: a lineage (a row of the table ``ReviewGroup.lineage`` points
    to), or a seed problem and its descendants."""

    root: Problem
    problems: list[Problem]
    lineage: object | None = None


def group_source_from_lineage(*, lineage) -> GroupSource:
    problems = selectors.lineage_problem_list(lineage=lineage)
    return GroupSource(root=problems[0], problems=problems, lineage=lineage)


def group_source_from_root(*, root: Problem) -> GroupSource:
    return GroupSource(root=root, problems=selectors.root_problem_list(root=root))


@transaction.atomic
def round_create(
    *,
    name: str,
    created_by,
    reviewers: Iterable,
    lineages: Iterable = (),
    roots: Iterable[Problem] = (),
    problem_groups: Iterable[Sequence[Problem]] = (),
    reasoning_groups: Iterable[Sequence] = (),
    reviewers_per_group: int = 2,
    exclude_creators: bool = True,
    instructions: str = "",
    rng: random.Random | None = None,
) -> ReviewRound:
    """Create a round with one group per lineage / root / reasoning group and assign reviewers.

    ``problem_groups``: each a sequence of 2-4 problems of any kind, shown as one group
    (``selectors.coding_group_plan`` builds them from campaigns and problem sets).
    ``reasoning_groups``: each a sequence of 2-4 judged reasoning items (see
    ``selectors.reasoning_group_plan``); a round may mix them with coding groups.
    Raises ValidationError (naming the lineage or seed by its public id, or the reasoning
    item by its id) when a source has fewer than 2 or more than 4 items, an item is not judged
    or appears twice, or when no reviewers are given.
    """
    reviewers = list(reviewers)
    if not name.strip():
        raise ValidationError("A round needs a name.")
    if not reviewers:
        raise ValidationError("Choose at least one reviewer.")
    if not 1 <= reviewers_per_group <= 5:
        raise ValidationError("Reviewers per group must be between 1 and 5.")
    sources = [group_source_from_lineage(lineage=lin) for lin in lineages]
    sources += [group_source_from_root(root=root) for root in roots]
    sources += [GroupSource(root=group[0], problems=list(group)) for group in problem_groups]
    question_groups = [list(g) for g in reasoning_groups]
    if not sources and not question_groups:
        raise ValidationError("Choose at least one lineage.")
    _check_reasoning_groups(question_groups)
    seen_roots: set[int] = set()
    seen_problems: set[int] = set()
    for source in sources:
        if len(source.problems) < MIN_GROUP:
            raise ValidationError(
                f"The lineage of {source.root.public_id} has {len(source.problems)} problem(s); "
                f"a review group needs {MIN_GROUP} to {MAX_GROUP}."
            )
        if source.root.pk in seen_roots:
            raise ValidationError(f"{source.root.public_id} was chosen twice.")
        seen_roots.add(source.root.pk)
        for problem in source.problems[:MAX_GROUP]:
            if problem.pk in seen_problems:
                raise ValidationError(f"{problem.public_id} would be reviewed twice in the round.")
            seen_problems.add(problem.pk)

    review_round = ReviewRound.objects.create(
        name=name.strip(),
        created_by=created_by,
        reviewers_per_group=reviewers_per_group,
        exclude_creators=exclude_creators,
        instructions=instructions,
    )
    review_round.reviewers.set(reviewers)
    # Every coding group, then every item, in one insert each: the queries do not grow with
    # the round (a round over a release of LiveCodeBench's size has hundreds of groups).
    groups = ReviewGroup.objects.bulk_create(
        ReviewGroup(
            round=review_round, lineage=source.lineage, root_problem=source.root, position=position
        )
        for position, source in enumerate(sources)
    )
    GroupItem.objects.bulk_create(
        GroupItem(group=group, problem=p, lineage_position=i)
        for group, source in zip(groups, sources, strict=True)
        for i, p in enumerate(source.problems[:MAX_GROUP])
    )
    source = selectors.question_source() if question_groups else None
    for position, items in enumerate(question_groups, start=len(sources)):
        group = ReviewGroup.objects.create(
            round=review_round,
            kind=GroupKind.REASONING,
            reasoning_type=source.group_type(items),
            position=position,
        )
        ordered = sorted(items, key=source.group_order)
        GroupItem.objects.bulk_create(
            GroupItem(group=group, reasoning_item=item, lineage_position=i)
            for i, item in enumerate(ordered)
        )
    round_assign(review_round=review_round, rng=rng)
    return review_round


def _check_reasoning_groups(groups: list[list]) -> None:
    if not groups:
        return
    source = selectors.question_source()
    seen: set[int] = set()
    for items in groups:
        if not MIN_GROUP <= len(items) <= MAX_GROUP:
            ids = ", ".join(str(i.pk) for i in items) or "none"
            raise ValidationError(
                f"A reasoning group needs {MIN_GROUP} to {MAX_GROUP} items; "
                f"one has {len(items)} (items {ids})."
            )
        for item in items:
            refusal = source.review_refusal(item)
            if refusal:
                raise ValidationError(refusal)
            if item.pk in seen:
                raise ValidationError(f"Reasoning item {item.pk} was chosen twice.")
            seen.add(item.pk)


def _group_creators(groups: list[ReviewGroup], users: list) -> dict[int, set[int]]:
    """Per group, the users among ``users`` who helped create its items: who launched a
    campaign that made one of its problems (as each coding kind answers,
    ``evolution.selectors.campaign_problems``) or its reasoning items. The groups' items must
    be prefetched; the coding groups cost one query, and one more per user who launched
    campaigns, whatever their number."""
    creators: dict[int, set[int]] = {group.pk: set() for group in groups}
    user_ids = {user.pk for user in users}
    problem_groups: dict[int, list[int]] = {}
    for group in groups:
        if group.kind == GroupKind.REASONING:
            creators[group.pk] |= user_ids & selectors.question_source().creator_ids(
                item_ids=[item.reasoning_item_id for item in group.items.all()]
            )
        for item in group.items.all():
            if item.problem_id is not None:
                problem_groups.setdefault(item.problem_id, []).append(group.pk)
    if not problem_groups:
        return creators
    launched: dict[int, list[Campaign]] = {}
    for campaign in Campaign.objects.filter(created_by__in=user_ids):
        launched.setdefault(campaign.created_by_id, []).append(campaign)
    for user_id, campaigns in launched.items():
        made = campaign_problems(campaigns).filter(pk__in=list(problem_groups))
        for problem_id in made.values_list("pk", flat=True):
            for group_id in problem_groups[problem_id]:
                creators[group_id].add(user_id)
    return creators


@transaction.atomic
def round_assign(*, review_round: ReviewRound, rng: random.Random | None = None) -> int:
    """Top up every group of the round to ``reviewers_per_group`` assignments.

    Load balanced: each pick is the eligible reviewer with the fewest problems assigned in
    this round, ties broken at random. Never twice to the same reviewer; creators are skipped
    when the round excludes them. Idempotent: rerunning (e.g. after adding reviewers) only
    fills gaps. Returns the number of assignments created.
    """
    rng = rng or _system_random
    review_round = ReviewRound.objects.select_for_update().get(pk=review_round.pk)
    pool = list(review_round.reviewers.filter(is_active=True))
    load = {u.pk: 0 for u in pool}
    counted = (
        Review.objects.filter(assignment__group__round=review_round)
        .values("assignment__reviewer_id")
        .annotate(n=Count("id"))
    )
    for row in counted:
        if row["assignment__reviewer_id"] in load:
            load[row["assignment__reviewer_id"]] = row["n"]
    groups = list(review_round.groups.prefetch_related("items", "assignments"))
    # Visit groups in random order so early lineages do not always get the same reviewers.
    rng.shuffle(groups)
    excluded = _group_creators(groups, pool) if review_round.exclude_creators else {}
    planned: list[tuple[Assignment, list[GroupItem]]] = []
    for group in groups:
        taken = {a.reviewer_id for a in group.assignments.all()}
        skip = excluded.get(group.pk, set())
        items = list(group.items.all())
        while len(taken) < review_round.reviewers_per_group:
            eligible = [u for u in pool if u.pk not in taken and u.pk not in skip]
            if not eligible:
                break  # "where possible": fewer reviewers than asked; the round page says so
            rng.shuffle(eligible)
            reviewer = min(eligible, key=lambda u: load[u.pk])
            order = list(items)
            rng.shuffle(order)  # per-reviewer order: position never reveals which one is the seed
            planned.append((Assignment(group=group, reviewer=reviewer), order))
            taken.add(reviewer.pk)
            load[reviewer.pk] += len(items)
    # The assignments, then their reviews, in one insert each.
    Assignment.objects.bulk_create(assignment for assignment, _ in planned)
    Review.objects.bulk_create(
        Review(assignment=assignment, item=item, position=i)
        for assignment, order in planned
        for i, item in enumerate(order)
    )
    return len(planned)


@transaction.atomic
def round_set_status(*, review_round: ReviewRound, status: str) -> ReviewRound:
    if status not in ("open", "closed"):
        raise ValidationError(f"Unknown round status {status!r}.")
    review_round.status = status
    review_round.save(update_fields=["status"])
    return review_round
