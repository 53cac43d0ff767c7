"""Building review groups: which problems a round may hold (filters by kind, level, pass@1,
tag and review status) and how they are grouped (a lineage, or a seed and its descendants).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q, QuerySet

from evolution.measurement.selectors import problem_difficulty
from evolution.models import Campaign, Problem
from evolution.models.campaigns import CampaignKind
from evolution.selectors import campaign_problems, problem_kind_tags
from evolution.sources import ProblemSource, source_for_model
from evolution.streams.kinds import Lineages, registered
from evolution.vocabulary import normalize_tag_key

from ..models import (
    GroupItem,
    Review,
    ReviewGroup,
    Tag,
)

MAX_GROUP = 4

LABELS = "ABCD"

MAX_EXAMPLES = 5


def lineage_source() -> Lineages:
    """How the kind whose lineages ``ReviewGroup.lineage`` points to answers for them
    (``Kind.lineages``; review never names that kind)."""
    label = ReviewGroup._meta.get_field("lineage").related_model._meta.label
    for kind in registered():
        if kind.lineages is not None and kind.lineages.model == label:
            return kind.lineages
    raise LookupError(f"no campaign kind answers for the lineages in {label}")


def lineage_list(ids) -> list:
    """The lineages of ``ids`` that exist, in their table's order."""
    return list(ReviewGroup._meta.get_field("lineage").related_model.objects.filter(pk__in=ids))


def lineage_problem_list(*, lineage) -> list[Problem]:
    """The lineage's seed then its accepted problems in round order, at most four."""
    return lineage_source().problems(lineage)[:MAX_GROUP]


def root_problem_list(*, root: Problem) -> list[Problem]:
    """A seed problem and its descendants (``Problem.lineage_root``), shallowest first."""
    descendants = Problem.objects.filter(lineage_root=root).exclude(pk=root.pk)
    return [root, *descendants.order_by("lineage_depth", "id")[: MAX_GROUP - 1]]


def lineage_choice_list() -> QuerySet:
    """Lineages with at least one accepted problem, for the round creation form."""
    return lineage_source().reviewable()


REVIEW_STATUSES = {
    "any": "any",
    "unreviewed": "never in a review round",
    "pending": "in a round, not rated yet",
    "reviewed": "rated by at least one reviewer",
}


@dataclass(frozen=True)
class ProblemFilter:
    """Which problems a coding round takes from its sources (every field optional)."""

    levels: tuple[int, ...] = ()
    tag: str = ""
    min_pass_at_1: float | None = None
    max_pass_at_1: float | None = None
    review_status: str = "any"

    @property
    def needs_measurement(self) -> bool:
        return bool(self.levels) or self.min_pass_at_1 is not None or self.max_pass_at_1 is not None


def coding_campaign_choice_list() -> QuerySet[Campaign]:
    """Campaigns of every coding kind, for the round creation form (reasoning campaigns have
    their own form)."""
    return Campaign.objects.exclude(kind=CampaignKind.REASONING).order_by("-created_at")


def _tagged_problem_ids(tag: str, among: list[int]) -> set[int]:
    """Problems a submitted review tagged ``tag`` (a tag's name or synonym), or which the kind
    that made them tagged so (``Kind.problem_tags``: BenchEvolver's mutation families, words
    of the review vocabulary)."""
    key = normalize_tag_key(tag)
    names = set(
        Tag.objects.filter(Q(name__iexact=tag.strip()) | Q(synonyms__key=key)).values_list(
            "name", flat=True
        )
    ) | {tag.strip()}
    reviewed = Review.objects.filter(
        submitted_at__isnull=False, tags__name__in=names, item__problem_id__in=among
    ).values_list("item__problem_id", flat=True)
    wanted = {name.casefold() for name in names}
    by_kind = {
        pid
        for pid, tags in problem_kind_tags(among).items()
        if wanted & {t.casefold() for t in tags}
    }
    return set(reviewed) | by_kind


def _review_status(problem_ids: list[int]) -> dict[int, str]:
    rated = set(
        Review.objects.filter(
            submitted_at__isnull=False, item__problem_id__in=problem_ids
        ).values_list("item__problem_id", flat=True)
    )
    grouped = set(
        GroupItem.objects.filter(problem_id__in=problem_ids).values_list("problem_id", flat=True)
    )
    return {
        pid: "reviewed" if pid in rated else "pending" if pid in grouped else "unreviewed"
        for pid in problem_ids
    }


def coding_problem_choice(
    *, campaigns=(), problem_sets=(), filters: ProblemFilter | None = None
) -> list[Problem]:
    """The problems of ``campaigns`` (any coding kind) and ``problem_sets`` that pass
    ``filters``: measured level and pass@1 (the campaign's own measurement or the shared panel
    measurement; unmeasured problems fail a level or pass@1 filter), a review tag, and review
    status. In lineage order (root, depth, id)."""
    filters = filters or ProblemFilter()
    ids = set(campaign_problems(list(campaigns)).values_list("id", flat=True))
    ids |= set(
        Problem.objects.filter(problem_sets__in=list(problem_sets)).values_list("id", flat=True)
    )
    ids = sorted(ids)
    if filters.needs_measurement:
        measured = problem_difficulty(ids)
        low = filters.min_pass_at_1 if filters.min_pass_at_1 is not None else 0.0
        high = filters.max_pass_at_1 if filters.max_pass_at_1 is not None else 1.0
        ids = [
            pid
            for pid in ids
            if pid in measured
            and low <= measured[pid].pass_rate <= high
            and (not filters.levels or measured[pid].level in filters.levels)
        ]
    if filters.tag.strip():
        tagged = _tagged_problem_ids(filters.tag, ids)
        ids = [pid for pid in ids if pid in tagged]
    if filters.review_status != "any":
        status = _review_status(ids)
        ids = [pid for pid in ids if status[pid] == filters.review_status]
    problems = list(Problem.objects.filter(pk__in=ids).select_related("lineage_root"))
    problems.sort(key=lambda p: (p.lineage_root_id or p.pk, p.lineage_depth, p.pk))
    return problems


def _balanced(items: list, size: int = MAX_GROUP) -> list[list]:
    """``items`` cut into the fewest groups of at most ``size``, sizes differing by one."""
    if not items:
        return []
    count = -(-len(items) // size)
    base, extra = divmod(len(items), count)
    out, start = [], 0
    for i in range(count):
        end = start + base + (1 if i < extra else 0)
        out.append(items[start:end])
        start = end
    return out


def coding_group_plan(
    *, problems: list[Problem], include_seeds: bool = True, max_groups: int | None = None
) -> tuple[list[list[Problem]], list[Problem]]:
    """Review groups of 2-4 problems: the chosen problems that share a seed go together (with
    the seed first when ``include_seeds``, as lineage groups show it); problems left alone are
    grouped with each other. Returns (groups, problems left out: a lone one that cannot make a
    group of two)."""
    by_root: dict[int, list[Problem]] = {}
    roots: dict[int, Problem] = {}
    for p in problems:
        root = p.lineage_root or p
        roots[root.pk] = root
        by_root.setdefault(root.pk, [])
        if p.pk != root.pk:
            by_root[root.pk].append(p)
    chosen = {p.pk for p in problems}
    groups: list[list[Problem]] = []
    alone: list[Problem] = []
    for root_id, descendants in by_root.items():
        root = roots[root_id]
        items = ([root] if include_seeds or root_id in chosen else []) + descendants
        if len(items) == 1:
            alone.extend(items)
            continue
        groups.extend(_balanced(items))
    left_out: list[Problem] = []
    if len(alone) == 1:
        if groups and len(groups[-1]) < MAX_GROUP:
            groups[-1].append(alone[0])
        else:
            left_out = alone
    else:
        groups.extend(_balanced(alone))
    if max_groups is not None:
        left_out += [p for g in groups[max_groups:] for p in g]
        groups = groups[:max_groups]
    return groups, left_out


def question_source() -> ProblemSource:
    """The problem source behind question groups: whichever kind owns the items
    ``GroupItem.reasoning_item`` points to (review never names that kind)."""
    return source_for_model(GroupItem._meta.get_field("reasoning_item").related_model)


def reasoning_choice_list() -> QuerySet:
    """Campaigns of the question source with at least one reviewable item, for the round
    creation form."""
    return question_source().reviewable_campaigns()


def reasoning_group_plan(
    *,
    reasoning=None,
    item_ids: list[int] | None = None,
    group_size: int = 3,
    max_groups: int | None = None,
) -> list[list]:
    """Reviewable questions cut into review groups, as their source deals them (the reasoning
    kind: one type across difficulties, sizes differing by at most one).

    The items are the campaign ``reasoning``'s reviewable items, or the reviewable items among
    ``item_ids``; the others are left out (``round_create`` names them). At most
    ``max_groups`` groups.
    """
    if not 2 <= group_size <= MAX_GROUP:
        raise ValueError(f"group_size must be 2 to {MAX_GROUP}")
    return question_source().review_groups(
        campaign=reasoning, item_ids=item_ids, group_size=group_size, max_groups=max_groups
    )
