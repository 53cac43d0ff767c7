"""Reads for blinded review.

Two families live here and must not mix:

- ``reviewer_*`` selectors build the ONLY data a reviewer ever receives. They return frozen
  dataclasses made of opaque ids, rendered statements, limits and public examples. They never
  return a model instance, so a template or schema cannot reach ``problem.title`` by accident.
  ``REVIEWER_FIELDS`` lists every field name they may carry; tests pin it.
- the other selectors serve curators and see everything.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field, fields, replace

from django.db.models import Count, Prefetch, Q, QuerySet

from evolution.measurement.selectors import problem_difficulty
from evolution.models import Campaign, Candidate, Lineage, Problem, TestCase
from evolution.models.campaigns import CampaignKind
from evolution.models.problems import ProblemKind
from evolution.rendering import examples_to_show, render_statement
from evolution.screening.describe import (
    RECOMMENDED_MAX_SIMILARITY,
    corpora_text,
    shown_neighbours,
)
from evolution.screening.models import ProblemScreen
from evolution.selectors import campaign_problems
from evolution.sources import ProblemSource, source_for_model

from .agreement import krippendorff_alpha, weighted_cohen_kappa
from .models import (
    RATING_DIMENSIONS,
    Adjudication,
    AdjudicationStatus,
    Assignment,
    GroupItem,
    Review,
    ReviewRound,
    RoundStatus,
    ScoreOverride,
    Tag,
    TagStatus,
    TagSynonym,
)
from .vocabulary import normalize_tag_key

MAX_GROUP = 4
LABELS = "ABCD"
MAX_EXAMPLES = 5

# --- building groups --------------------------------------------------------------------------


def lineage_problem_list(*, lineage: Lineage) -> list[Problem]:
    """The lineage's seed then its accepted problems in round order, at most four."""
    accepted = (
        Candidate.objects.filter(lineage=lineage, decision="accepted")
        .select_related("accepted_problem")
        .order_by("round")
    )
    problems = [lineage.seed] + [c.accepted_problem for c in accepted if c.accepted_problem]
    return problems[:MAX_GROUP]


def root_problem_list(*, root: Problem) -> list[Problem]:
    """A seed problem and its descendants (``Problem.lineage_root``), shallowest first."""
    descendants = Problem.objects.filter(lineage_root=root).exclude(pk=root.pk)
    return [root, *descendants.order_by("lineage_depth", "id")[: MAX_GROUP - 1]]


def lineage_choice_list() -> QuerySet[Lineage]:
    """Lineages with at least one accepted problem, for the round creation form."""
    return (
        Lineage.objects.select_related("campaign", "seed")
        .annotate(n_accepted=Count("candidates", filter=Q(candidates__decision="accepted")))
        .filter(n_accepted__gte=1)
        .order_by("campaign_id", "position")
    )


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
    """Problems a submitted review tagged ``tag`` (a tag's name or synonym), or whose
    BenchEvolver mutation family (the review vocabulary's tags) is ``tag``."""
    key = normalize_tag_key(tag)
    names = set(
        Tag.objects.filter(Q(name__iexact=tag.strip()) | Q(synonyms__key=key)).values_list(
            "name", flat=True
        )
    ) | {tag.strip()}
    reviewed = Review.objects.filter(
        submitted_at__isnull=False, tags__name__in=names, item__problem_id__in=among
    ).values_list("item__problem_id", flat=True)
    same_family = Q()
    for name in names:
        same_family |= Q(family__iexact=name)
    family = Candidate.objects.filter(same_family, accepted_problem_id__in=among).values_list(
        "accepted_problem_id", flat=True
    )
    return set(reviewed) | set(family)


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


# --- reviewer side (blinded) ------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewerExample:
    input: str
    output: str


@dataclass(frozen=True)
class ReviewerDraft:
    clarity: int | None
    novelty: int | None
    difficulty: int | None
    quality: int | None
    validity: str
    validity_reason: str
    cf_rating: int | None
    tags: str
    justification: str
    answer_verdict: str


@dataclass(frozen=True)
class ReviewerQuestion:
    """A reasoning item as its reviewer sees it: the question and the answer to judge. No
    type, difficulty, campaign, run, answering model, judge score or rationale."""

    opaque_id: str
    label: str
    question_html: str
    answer_html: str
    draft: ReviewerDraft


@dataclass(frozen=True)
class ReviewerProblem:
    opaque_id: str
    label: str
    statement_html: str
    time_limit_s: float
    memory_mb: int
    io_format: str
    entry_point: str
    starter_code: str
    examples: list[ReviewerExample]
    draft: ReviewerDraft


@dataclass(frozen=True)
class ReviewerGroup:
    opaque_id: str
    instructions: str
    submitted: bool
    certified_no_ai: bool
    problems: list[ReviewerProblem]
    # Reasoning items (a group holds problems or questions, never both).
    questions: list[ReviewerQuestion] = field(default_factory=list)
    # The draft's version: a save based on an older one is refused (see reviewer_draft_state).
    draft_version: int = 0


@dataclass(frozen=True)
class ReviewerDraftState:
    """A group's draft as the review form names its inputs (``"<item>-clarity": "4"``, empty
    text for no answer, ``"certify_no_ai": "on"``), with the version a page's next save must
    be based on. The page compares it with its own inputs: equal means the server holds what
    the reviewer sees, and the browser's copy can go."""

    version: int
    submitted: bool
    fields: dict[str, str]


@dataclass(frozen=True)
class ReviewerQueueEntry:
    opaque_id: str
    problem_count: int
    drafted_count: int
    submitted: bool


@dataclass(frozen=True)
class ReviewerTag:
    name: str
    matched: str


def _field_names(cls) -> set[str]:
    return {f.name for f in fields(cls)}


# Every key a reviewer can ever receive, for the blinding tests.
REVIEWER_FIELDS = frozenset().union(
    *(
        _field_names(c)
        for c in (
            ReviewerExample,
            ReviewerDraft,
            ReviewerProblem,
            ReviewerQuestion,
            ReviewerGroup,
            ReviewerDraftState,
            ReviewerQueueEntry,
            ReviewerTag,
        )
    )
)

_IO_FORMATS = {
    "stdio": "Read from standard input, write to standard output.",
    "function": "Implement the function described.",
    "assert": "Implement the code the assertions call.",
}


def _reviewer_assignments(reviewer) -> QuerySet[Assignment]:
    return Assignment.objects.filter(reviewer=reviewer, group__round__status="open")


def reviewer_queue(*, reviewer) -> list[ReviewerQueueEntry]:
    """The reviewer's groups: unsubmitted first, then by opaque id (random, so meaningless)."""
    rows = _reviewer_assignments(reviewer).annotate(
        n=Count("reviews"),
        drafted=Count(
            "reviews",
            filter=Q(reviews__clarity__isnull=False) | ~Q(reviews__justification=""),
        ),
    )
    entries = [
        ReviewerQueueEntry(
            opaque_id=a.opaque_id,
            problem_count=a.n,
            drafted_count=a.drafted,
            submitted=a.submitted_at is not None,
        )
        for a in rows
    ]
    return sorted(entries, key=lambda e: (e.submitted, e.opaque_id))


def reviewer_assignment(*, reviewer, opaque_id: str) -> Assignment:
    """The reviewer's own assignment or Assignment.DoesNotExist (same for others' and unknown)."""
    return _reviewer_assignments(reviewer).select_related("group__round").get(opaque_id=opaque_id)


def _draft(review: Review) -> ReviewerDraft:
    return ReviewerDraft(
        clarity=review.clarity,
        novelty=review.novelty,
        difficulty=review.difficulty,
        quality=review.quality,
        validity=review.validity,
        validity_reason=review.validity_reason,
        cf_rating=review.cf_rating,
        tags=review.tags_text,
        justification=review.justification,
        answer_verdict=review.answer_verdict,
    )


# The inputs of one item in the review form, by kind of item.
CODING_DRAFT_FIELDS = (
    "clarity",
    "novelty",
    "difficulty",
    "quality",
    "validity",
    "validity_reason",
    "cf_rating",
    "tags",
    "justification",
)
REASONING_DRAFT_FIELDS = ("clarity", "difficulty", "answer_verdict", "justification")


def _form_value(review: Review, name: str) -> str:
    value = review.tags_text if name == "tags" else getattr(review, name)
    return "" if value is None else str(value)


def reviewer_draft_state(*, assignment: Assignment) -> ReviewerDraftState:
    """What the server holds of ``assignment``'s answers, named as the form names them."""
    reviews = (
        Review.objects.filter(assignment=assignment).select_related("item").order_by("position")
    )
    values: dict[str, str] = {}
    for review in reviews:
        names = REASONING_DRAFT_FIELDS if review.item.reasoning_item_id else CODING_DRAFT_FIELDS
        for name in names:
            values[f"{review.item.opaque_id}-{name}"] = _form_value(review, name)
    values["certify_no_ai"] = "on" if assignment.certified_no_ai else ""
    return ReviewerDraftState(
        version=assignment.draft_version,
        submitted=assignment.submitted_at is not None,
        fields=values,
    )


def _label(position: int) -> str:
    return LABELS[position] if position < len(LABELS) else str(position + 1)


# Words in a title that say how a problem was made, not what it asks.
_METHOD_WORDS = re.compile(
    r"\b(evolved|evolution|variant|mutat(?:ed|ion)|seed|original|harder|round\s*\d+|v\d+)\b",
    re.IGNORECASE,
)
# A parenthetical that names an operator or a method step ("(change_goal)", "(round 2)").
_METHOD_PARENTHETICAL = re.compile(r"\s*[\(\[]([^\)\]]*)[\)\]]")


def blind_title(title: str) -> str:
    """A title as a blind reviewer sees it: without parentheticals that name an operator (a
    snake_case identifier) or a method word, and without method words ("Knapsack value
    (change_goal)" -> "Knapsack value", "Evolved: Pair Count" -> "Pair Count")."""

    def drop(match: re.Match) -> str:
        inner = match.group(1)
        if re.search(r"[a-z]+_[a-z_]+", inner) or _METHOD_WORDS.search(inner):
            return ""
        return match.group(0)

    cleaned = _METHOD_PARENTHETICAL.sub(drop, title)
    cleaned = _METHOD_WORDS.sub("", cleaned)
    cleaned = re.sub(r"^[\s:,-]+|[\s:,-]+$", "", re.sub(r"\s{2,}", " ", cleaned))
    return cleaned or "Problem"


def _blind_heading(statement: str) -> str:
    """A statement whose first line is a heading other than the title (which the renderer
    drops) keeps it as ``blind_title`` shows it: a heading names no operator either."""
    first, newline, rest = statement.lstrip("\n").partition("\n")
    heading = re.match(r"\s*(#+)\s*(.*)", first)
    if heading is None:
        return statement
    return f"{heading.group(1)} {blind_title(heading.group(2).strip())}{newline}{rest}"


def _same_presentation(problems: list[ReviewerProblem]) -> list[ReviewerProblem]:
    """Every problem of a group shown the same way: starter code for all or for none (only a
    seed imported with its prompt carries one, which would point at it)."""
    if len(problems) < 2 or all(p.starter_code for p in problems):
        return problems
    return [replace(p, starter_code="") for p in problems]


def _same_limits(problems: list[ReviewerProblem]) -> list[ReviewerProblem]:
    """Every problem of a group shown with the same limits: the group's most generous ones.

    Evolutions are often measured at other limits than their seed (a seed at 2 s / 256 MB
    next to evolutions at 1 s / 512 MB), so per-problem limits point at the seed. The most
    generous limits keep every problem solvable as shown; tightness is not what reviewers
    judge, and the released problem keeps its own limits."""
    if len(problems) < 2:
        return problems
    time_limit = max(p.time_limit_s for p in problems)
    memory = max(p.memory_mb for p in problems)
    return [replace(p, time_limit_s=time_limit, memory_mb=memory) for p in problems]


def problems_under_blind_review() -> set[int]:
    """Ids of problems that a reviewer is rating blind right now: in a group of an open round
    with an assignment not yet submitted. Public pages hide their origin and reviewer tags."""
    return set(
        GroupItem.objects.filter(
            problem__isnull=False,
            group__round__status=RoundStatus.OPEN,
            group__assignments__submitted_at__isnull=True,
        ).values_list("problem_id", flat=True)
    )


def items_under_blind_review() -> QuerySet[GroupItem]:
    """The group items (problems and reasoning items) reviewers are rating blind right now, as
    an unevaluated query: callers filter by its ``problem_id`` or ``reasoning_item_id``
    values inside their own query (one SQL statement)."""
    return GroupItem.objects.filter(
        group__round__status=RoundStatus.OPEN,
        group__assignments__submitted_at__isnull=True,
    )


def rates_blind_now(*, user) -> bool:
    """True while ``user`` has an assignment of an open round not yet submitted: they are
    rating problems blind, so public pages about released problems are off limits to them."""
    if not getattr(user, "is_authenticated", False):
        return False
    return Assignment.objects.filter(
        reviewer=user,
        submitted_at__isnull=True,
        group__round__status=RoundStatus.OPEN,
    ).exists()


# Releases sit above review: they register how to find the published releases that show given
# problems (releases/apps.py), so review never imports them.
_published_lookup = None


def register_published_lookup(lookup) -> None:
    """``lookup(problem_ids) -> [{"public_id", "title", "benchmark", "slug", "version"}]``."""
    global _published_lookup
    _published_lookup = lookup


def round_published_problems(*, review_round: ReviewRound) -> list[dict]:
    """Problems of this round that a published release already shows: reviewers can find
    them on public pages, so the curator is told (origin and tags there are withheld while
    the round is blind, but exported files of the release still carry them)."""
    if _published_lookup is None:
        return []
    problem_ids = review_round.groups.values_list("items__problem_id", flat=True)
    return _published_lookup(problem_ids)


def reviewer_group(*, reviewer, opaque_id: str) -> ReviewerGroup:
    """One group as its reviewer sees it, in that reviewer's own shuffled order."""
    assignment = reviewer_assignment(reviewer=reviewer, opaque_id=opaque_id)
    public_tests = Prefetch(
        "item__problem__tests",
        queryset=TestCase.objects.filter(tier="public", hidden=False).order_by("ordinal"),
        to_attr="public_tests",
    )
    reviews = (
        Review.objects.filter(assignment=assignment)
        .select_related("item__problem", "item__reasoning_item")
        .prefetch_related(public_tests)
        .order_by("position")
    )
    problems, questions = [], []
    for review in reviews:
        if review.item.reasoning_item_id:
            shown = question_source().present(review.item.reasoning_item)
            questions.append(
                ReviewerQuestion(
                    opaque_id=review.item.opaque_id,
                    label=_label(review.position),
                    question_html=render_statement(shown.statement),
                    answer_html=render_statement(shown.answer),
                    draft=_draft(review),
                )
            )
            continue
        p = review.item.problem
        problems.append(
            ReviewerProblem(
                opaque_id=review.item.opaque_id,
                label=_label(review.position),
                statement_html=render_statement(_blind_heading(p.statement), title=p.title),
                time_limit_s=p.time_limit_s,
                memory_mb=p.memory_mb,
                io_format=_IO_FORMATS.get(p.harness, ""),
                entry_point=p.entry_point if p.harness != "stdio" else "",
                starter_code=p.starter_code if p.harness != "stdio" else "",
                # Examples the statement already shows are not repeated under it.
                examples=examples_to_show(
                    p.statement,
                    [
                        ReviewerExample(input=t.input, output=t.output)
                        for t in p.public_tests[:MAX_EXAMPLES]
                    ],
                ),
                draft=_draft(review),
            )
        )
    problems = _same_presentation(_same_limits(problems))
    return ReviewerGroup(
        opaque_id=assignment.opaque_id,
        instructions=assignment.group.round.instructions,
        submitted=assignment.submitted_at is not None,
        certified_no_ai=assignment.certified_no_ai,
        problems=problems,
        questions=questions,
        draft_version=assignment.draft_version,
    )


def reviewer_tag_suggestions(*, reviewer, query: str, limit: int = 8) -> list[ReviewerTag]:
    """Approved tags (and the reviewer's own proposals) whose name or synonym matches."""
    key = normalize_tag_key(query)
    if not key:
        return []
    visible = Q(tag__status=TagStatus.APPROVED) | Q(
        tag__status=TagStatus.PROPOSED, tag__proposed_by=reviewer
    )
    matches = (
        TagSynonym.objects.filter(visible)
        .filter(Q(key__startswith=key) | Q(key__contains=f" {key}"))
        .select_related("tag")
        .order_by("key")
    )
    seen, out = set(), []
    for syn in matches:
        if syn.tag.name in seen:
            continue
        seen.add(syn.tag.name)
        matched = "" if normalize_tag_key(syn.tag.name) == syn.key else syn.key
        out.append(ReviewerTag(name=syn.tag.name, matched=matched))
        if len(out) >= limit:
            break
    return out


# --- curator side ---------------------------------------------------------------------------


def round_list() -> QuerySet[ReviewRound]:
    return ReviewRound.objects.annotate(
        n_groups=Count("groups", distinct=True),
        n_assignments=Count("groups__assignments", distinct=True),
        n_submitted=Count(
            "groups__assignments",
            filter=Q(groups__assignments__submitted_at__isnull=False),
            distinct=True,
        ),
    ).order_by("-created_at")


def round_get(*, pk: int) -> ReviewRound:
    return ReviewRound.objects.get(pk=pk)


@dataclass
class ReviewerProgress:
    username: str
    groups: int
    submitted: int
    problems: int
    drafted: int
    seconds: float


def round_progress(*, review_round: ReviewRound) -> list[ReviewerProgress]:
    rows = (
        Assignment.objects.filter(group__round=review_round)
        .values("reviewer__username")
        .annotate(
            groups=Count("id", distinct=True),
            submitted=Count("id", filter=Q(submitted_at__isnull=False), distinct=True),
        )
        .order_by("reviewer__username")
    )
    per_review = (
        Review.objects.filter(assignment__group__round=review_round)
        .values("assignment__reviewer__username")
        .annotate(
            problems=Count("id"),
            drafted=Count("id", filter=Q(clarity__isnull=False) | ~Q(justification="")),
        )
    )
    review_stats = {r["assignment__reviewer__username"]: r for r in per_review}
    seconds: dict[str, float] = defaultdict(float)
    for username, secs in Review.objects.filter(assignment__group__round=review_round).values_list(
        "assignment__reviewer__username", "seconds_spent"
    ):
        seconds[username] += secs
    return [
        ReviewerProgress(
            username=r["reviewer__username"],
            groups=r["groups"],
            submitted=r["submitted"],
            problems=review_stats.get(r["reviewer__username"], {}).get("problems", 0),
            drafted=review_stats.get(r["reviewer__username"], {}).get("drafted", 0),
            seconds=seconds[r["reviewer__username"]],
        )
        for r in rows
    ]


def round_understaffed_groups(*, review_round: ReviewRound) -> int:
    """Groups with fewer reviewers than the round asks for (not enough eligible reviewers)."""
    return (
        review_round.groups.annotate(n=Count("assignments"))
        .filter(n__lt=review_round.reviewers_per_group)
        .count()
    )


@dataclass
class ItemAggregate:
    item: GroupItem
    problem: Problem | None  # None for a reasoning item
    group_opaque_id: str
    n_reviews: int
    means: dict[str, float | None]
    final: dict[str, float | str | None]
    overrides: dict[str, ScoreOverride] = field(default_factory=dict)
    cf_estimate: float | None = None
    tags: list[str] = field(default_factory=list)
    validity_votes: dict[str, int] = field(default_factory=dict)
    open_adjudications: int = 0
    # (dimension, override, the automatic value it replaced), for display.
    override_notes: list[tuple[str, ScoreOverride, float | str | None]] = field(
        default_factory=list
    )
    # Reasoning items: the item, its reviewers' answer verdicts, and the settled verdict
    # (the curator's newest "answer" override, else the majority, "incorrect" winning ties).
    reasoning_item: object | None = None
    answer_votes: dict[str, int] = field(default_factory=dict)
    answer_final: str | None = None

    @property
    def label(self) -> str:
        return self.item.subject_label


def _submitted_reviews(review_round: ReviewRound) -> QuerySet[Review]:
    return (
        Review.objects.filter(assignment__group__round=review_round, submitted_at__isnull=False)
        .select_related("assignment__reviewer", "item")
        .prefetch_related("tags")
        .order_by("item_id", "assignment_id")
    )


def _mean(values: list) -> float | None:
    return round(statistics.fmean(values), 3) if values else None


def round_item_aggregates(*, review_round: ReviewRound) -> list[ItemAggregate]:
    """Per problem: mean of each rating, CF estimate, union of canonical tags, validity votes,
    and the final value of each dimension after the newest curator override."""
    by_item: dict[int, list[Review]] = defaultdict(list)
    for r in _submitted_reviews(review_round):
        by_item[r.item_id].append(r)
    latest: dict[tuple[int, str], ScoreOverride] = {}
    for o in ScoreOverride.objects.filter(item__group__round=review_round).select_related(
        "created_by"
    ):
        latest.setdefault((o.item_id, o.dimension), o)  # ordering is newest first
    open_adj = defaultdict(int)
    for item_id in Adjudication.objects.filter(
        item__group__round=review_round, status=AdjudicationStatus.OPEN
    ).values_list("item_id", flat=True):
        open_adj[item_id] += 1
    items = (
        GroupItem.objects.filter(group__round=review_round)
        .select_related("problem", "group", "reasoning_item")
        .order_by("group__position", "lineage_position")
    )
    out = []
    for item in items:
        reviews = by_item.get(item.pk, [])
        means = {
            d: _mean([getattr(r, d) for r in reviews if getattr(r, d) is not None])
            for d in RATING_DIMENSIONS
        }
        cf = _mean([r.cf_rating for r in reviews if r.cf_rating is not None])
        votes: dict[str, int] = defaultdict(int)
        for r in reviews:
            if r.validity:
                votes[r.validity] += 1
        majority = max(votes, key=lambda v: (votes[v], v == "invalid")) if votes else None
        final: dict[str, float | str | None] = {**means, "cf_rating": cf, "validity": majority}
        overrides, notes = {}, []
        for dim in final:
            o = latest.get((item.pk, dim))
            if o is not None:
                overrides[dim] = o
                notes.append((dim, o, final[dim]))
                final[dim] = o.value if dim == "validity" else float(o.value)
        tags = sorted({t.name for r in reviews for t in r.tags.all()})
        answer_votes: dict[str, int] = defaultdict(int)
        for r in reviews:
            if r.answer_verdict:
                answer_votes[r.answer_verdict] += 1
        answer_final = (
            max(answer_votes, key=lambda v: (answer_votes[v], v == "incorrect"))
            if answer_votes
            else None
        )
        answer_override = latest.get((item.pk, "answer"))
        if answer_override is not None:
            overrides["answer"] = answer_override
            notes.append(("answer", answer_override, answer_final))
            answer_final = answer_override.value
        out.append(
            ItemAggregate(
                item=item,
                problem=item.problem,
                group_opaque_id=item.group.opaque_id,
                n_reviews=len(reviews),
                means=means,
                final=final,
                overrides=overrides,
                cf_estimate=cf,
                tags=tags,
                validity_votes=dict(votes),
                open_adjudications=open_adj[item.pk],
                override_notes=notes,
                reasoning_item=item.reasoning_item,
                answer_votes=dict(answer_votes),
                answer_final=answer_final,
            )
        )
    return out


@dataclass
class AgreementRow:
    dimension: str
    alpha: float | None
    kappa: float | None
    items: int
    pairs: int
    metric: str


def round_agreement(*, review_round: ReviewRound) -> list[AgreementRow]:
    """Krippendorff's alpha (ordinal for 1-5 ratings, interval for the CF estimate) over the
    round, and quadratic-weighted Cohen's kappa over the items rated by exactly two reviewers
    (first and second by assignment order; the statistic is symmetric in the two raters)."""
    by_item: dict[int, list[Review]] = defaultdict(list)
    for r in _submitted_reviews(review_round):
        by_item[r.item_id].append(r)
    rows = []
    for dim in (*RATING_DIMENSIONS, "cf_rating"):
        units = [[getattr(r, dim) for r in reviews] for reviews in by_item.values()]
        pairable = [u for u in units if sum(v is not None for v in u) >= 2]
        pairs = [(u[0], u[1]) for u in units if len(u) == 2 and None not in u]
        if dim == "cf_rating":
            alpha = krippendorff_alpha(units, metric="interval")
            kappa = None
        else:
            alpha = krippendorff_alpha(units, metric="ordinal")
            kappa = weighted_cohen_kappa(pairs, categories=[1, 2, 3, 4, 5]) if pairs else None
        rows.append(
            AgreementRow(
                dimension=dim,
                alpha=alpha,
                kappa=kappa,
                items=len(pairable),
                pairs=len(pairs),
                metric="interval" if dim == "cf_rating" else "ordinal",
            )
        )
    return rows


def round_adjudications(*, review_round: ReviewRound, status: str | None = None):
    qs = Adjudication.objects.filter(item__group__round=review_round).select_related(
        "item__problem", "item__reasoning_item", "item__group", "resolved_by"
    )
    if status:
        qs = qs.filter(status=status)
    return qs.order_by("status", "item__group__position", "item__lineage_position", "dimension")


@dataclass(frozen=True)
class ScreenPanel:
    """The contamination screen of an item under adjudication, for the curator only (never a
    reviewer's: provenance): its nearest public problems beside the ratings."""

    screened: bool
    reason: str = ""  # why there is no screen (not screened)
    neighbours: tuple = ()  # describe.shown_neighbours entries, each with "above"
    lineage_count: int = 0
    index: str = ""
    screened_at: object = None
    context: str = ""
    max_similarity: float | None = None
    threshold: float = RECOMMENDED_MAX_SIMILARITY

    @property
    def above(self) -> int:
        return sum(1 for n in self.neighbours if n["above"])


def adjudication_screens(*, adjudications) -> dict[int, ScreenPanel]:
    """Each adjudicated item's screen panel, by item id, in one query: the stored screen of
    its problem (``evolution.screening``) compared with the gate's recommended
    ``max_public_similarity`` (a round belongs to no release, whose gate sets its own)."""
    items = {a.item_id: a.item for a in adjudications}
    problem_ids = {i.problem_id for i in items.values() if i.problem_id}
    screens = {s.problem_id: s for s in ProblemScreen.objects.filter(problem_id__in=problem_ids)}
    threshold = RECOMMENDED_MAX_SIMILARITY
    out = {}
    for item_id, item in items.items():
        screen = screens.get(item.problem_id) if item.problem_id else None
        if screen is None:
            if not item.problem_id:
                reason = "a reasoning question: the screen compares coding problems"
            elif item.problem.kind == ProblemKind.SEED:
                reason = "a seed: a public problem itself"
            else:
                reason = "no screen stored yet (a BenchEvolver acceptance, a panel measurement "
                reason += "or a release's gate screens it)"
            out[item_id] = ScreenPanel(screened=False, reason=reason, threshold=threshold)
            continue
        record = screen.record or {}
        out[item_id] = ScreenPanel(
            screened=True,
            neighbours=tuple(shown_neighbours(record, threshold)),
            lineage_count=len(record.get("lineage") or []),
            index=corpora_text(record.get("index") or {}),
            screened_at=screen.screened_at,
            context=screen.context,
            max_similarity=screen.max_similarity,
            threshold=threshold,
        )
    return out


def adjudication_reviews(*, adjudication: Adjudication) -> list[Review]:
    return list(
        Review.objects.filter(item=adjudication.item, submitted_at__isnull=False)
        .select_related("assignment__reviewer")
        .order_by("assignment_id")
    )


def round_export_rows(*, review_round: ReviewRound):
    """Every review of the round (drafts included, flagged) as flat dicts for CSV / JSONL."""
    reviews = (
        Review.objects.filter(assignment__group__round=review_round)
        .select_related(
            "assignment__reviewer", "item__problem", "item__reasoning_item", "item__group__lineage"
        )
        .prefetch_related("tags")
        .order_by("item__group__position", "item__lineage_position", "assignment_id")
    )
    source = question_source()
    for r in reviews:
        p, ri = r.item.problem, r.item.reasoning_item
        # Every row has the same keys (CSV needs one header): coding or question columns
        # stay empty when they do not apply.
        yield {
            "round": review_round.name,
            "group": r.item.group.opaque_id,
            "item": r.item.opaque_id,
            "problem_public_id": p.public_id if p else None,
            "problem_title": p.title if p else None,
            "problem_kind": p.kind if p else source.kind,
            **source.export_columns(ri),
            "answer_verdict": r.answer_verdict,
            "lineage_position": r.item.lineage_position,
            "lineage_id": r.item.group.lineage_id,
            "reviewer": r.assignment.reviewer.username,
            "shown_position": r.position,
            "status": "submitted" if r.submitted_at else "draft",
            "clarity": r.clarity,
            "novelty": r.novelty,
            "difficulty": r.difficulty,
            "quality": r.quality,
            "validity": r.validity,
            "validity_reason": r.validity_reason,
            "cf_rating": r.cf_rating,
            "tags": sorted(t.name for t in r.tags.all()) if r.submitted_at else [],
            "tags_text": r.tags_text,
            "justification": r.justification,
            "certified_no_ai": r.assignment.certified_no_ai,
            "seconds_spent": r.seconds_spent,
            "submitted_at": r.submitted_at.isoformat() if r.submitted_at else None,
        }


def tag_list(*, status: str | None = None) -> QuerySet[Tag]:
    qs = Tag.objects.select_related("merged_into", "proposed_by").annotate(
        n_reviews=Count("reviews"), n_synonyms=Count("synonyms")
    )
    if status:
        qs = qs.filter(status=status)
    return qs.order_by("status", "name")
