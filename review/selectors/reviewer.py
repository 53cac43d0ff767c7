"""The reviewer side, blinded: the ONLY data a reviewer ever receives (``reviewer_*``), frozen
dataclasses of opaque ids, rendered statements, limits and public examples; titles and headings
stripped of the words that say how a problem was made. ``REVIEWER_FIELDS`` lists every field
name they may carry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace

from django.db.models import Count, Prefetch, Q, QuerySet

from evolution.models import TestCase
from evolution.rendering import examples_to_show, render_statement
from evolution.vocabulary import normalize_tag_key

from ..models import (
    Assignment,
    GroupItem,
    Review,
    RoundStatus,
    TagStatus,
    TagSynonym,
)
from .groups import LABELS, MAX_EXAMPLES, question_source


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


def blind_heading(statement: str) -> str:
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
                statement_html=render_statement(blind_heading(p.statement), title=p.title),
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
