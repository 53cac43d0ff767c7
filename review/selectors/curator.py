"""The curator side: rounds, progress, agreement, item aggregates, adjudications with the
disputed problem's contamination screen, exports; curators see everything.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Count, Q, QuerySet

from evolution.models import Problem
from evolution.models.problems import ProblemKind
from evolution.screening.describe import (
    RECOMMENDED_MAX_SIMILARITY,
    corpora_text,
    shown_neighbours,
)
from evolution.screening.models import ProblemScreen

from ..agreement import krippendorff_alpha, weighted_cohen_kappa
from ..models import (
    RATING_DIMENSIONS,
    Adjudication,
    AdjudicationStatus,
    Assignment,
    GroupItem,
    Review,
    ReviewRound,
    ScoreOverride,
    Tag,
)
from .groups import question_source


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
