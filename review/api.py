"""Review API. Reviewer operations return only ``Reviewer*Out`` schemas, built from the blinded
``selectors.reviewer_*`` dataclasses; ``REVIEWER_SCHEMAS`` lists them for the blinding tests."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from ninja import Router, Schema, Status
from ninja.errors import HttpError

from accounts.roles import ADMIN, CURATOR, REVIEWER, user_roles
from evolution.models import Problem

from . import selectors, services
from .forms import rating_fields
from .models import Adjudication, Assignment, GroupItem, ReviewRound, Tag

router = Router(tags=["review"])


def _require(request, *roles: str) -> None:
    if not user_roles(request.user) & set(roles):
        raise HttpError(403, "Your role does not allow this operation.")


def _messages(exc: ValidationError) -> str:
    return "; ".join(exc.messages)


# --- reviewer schemas (blinded: opaque ids, statements, limits, examples, own draft) --------


class ReviewerExampleOut(Schema):
    input: str
    output: str


class ReviewerDraftOut(Schema):
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


class ReviewerQuestionOut(Schema):
    opaque_id: str
    label: str
    question_html: str
    answer_html: str
    draft: ReviewerDraftOut


class ReviewerProblemOut(Schema):
    opaque_id: str
    label: str
    statement_html: str
    time_limit_s: float
    memory_mb: int
    io_format: str
    entry_point: str
    starter_code: str
    examples: list[ReviewerExampleOut]
    draft: ReviewerDraftOut


class ReviewerGroupOut(Schema):
    opaque_id: str
    instructions: str
    submitted: bool
    certified_no_ai: bool
    problems: list[ReviewerProblemOut]
    questions: list[ReviewerQuestionOut]
    draft_version: int


class ReviewerQueueEntryOut(Schema):
    opaque_id: str
    problem_count: int
    drafted_count: int
    submitted: bool


class ReviewerTagOut(Schema):
    name: str
    matched: str


class RatingPointOut(Schema):
    value: int
    meaning: str


class RatingScaleOut(Schema):
    name: str
    points: list[RatingPointOut]


class ReviewItemIn(Schema):
    opaque_id: str
    clarity: int | None = None
    novelty: int | None = None
    difficulty: int | None = None
    quality: int | None = None
    validity: str = ""
    validity_reason: str = ""
    cf_rating: int | None = None
    tags: list[str] = []
    justification: str = ""
    answer_verdict: str = ""
    elapsed: float = 0


class GroupAnswersIn(Schema):
    items: list[ReviewItemIn]
    certify_no_ai: bool = False
    # The draft version these answers are based on (``draft_version`` of the group): an older
    # one than the server's is refused with 409 and nothing is stored. None: not checked.
    draft_version: int | None = None


class SavedOut(Schema):
    saved: int
    draft_version: int


class DraftRejectedOut(Schema):
    detail: str
    saved: int
    rejected: dict[str, list[str]]
    draft_version: int


class SubmitOut(Schema):
    submitted: bool
    errors: dict[str, dict[str, list[str]]]
    certify_error: str


REVIEWER_SCHEMAS = (
    ReviewerExampleOut,
    ReviewerDraftOut,
    ReviewerProblemOut,
    ReviewerQuestionOut,
    ReviewerGroupOut,
    ReviewerQueueEntryOut,
    ReviewerTagOut,
    RatingPointOut,
    RatingScaleOut,
    SavedOut,
    SubmitOut,
)


def _form_data(payload: GroupAnswersIn) -> dict[str, str]:
    """The API speaks JSON; the services validate the same form fields the HTML page posts."""
    data: dict[str, str] = {}
    for item in payload.items:
        values = item.dict()
        opaque = values.pop("opaque_id")
        values["tags"] = ", ".join(t.strip() for t in values["tags"] if t.strip())
        for name, value in values.items():
            data[f"{opaque}-{name}"] = "" if value is None else str(value)
    if payload.certify_no_ai:
        data["certify_no_ai"] = "on"
    if payload.draft_version is not None:
        data["draft_version"] = str(payload.draft_version)
    return data


def _own(request, opaque_id: str) -> Assignment:
    _require(request, REVIEWER)
    try:
        return selectors.reviewer_assignment(reviewer=request.user, opaque_id=opaque_id)
    except Assignment.DoesNotExist:
        raise HttpError(404, "No such review group in your queue.")


@router.get("/review/queue", response=list[ReviewerQueueEntryOut])
def reviewer_queue(request):
    _require(request, REVIEWER)
    return selectors.reviewer_queue(reviewer=request.user)


@router.get("/review/scales", response=list[RatingScaleOut])
def rating_scales(request):
    _require(request, REVIEWER, CURATOR, ADMIN)
    return rating_fields()


@router.get("/review/groups/{opaque_id}", response=ReviewerGroupOut)
def reviewer_group(request, opaque_id: str):
    assignment = _own(request, opaque_id)
    services.assignment_open(assignment=assignment)
    return selectors.reviewer_group(reviewer=request.user, opaque_id=opaque_id)


@router.put("/review/groups/{opaque_id}/draft", response={200: SavedOut, 422: DraftRejectedOut})
def reviewer_save_draft(request, opaque_id: str, payload: GroupAnswersIn):
    """Save the valid answers as a draft; 422 naming each refused value (not stored)."""
    assignment = _own(request, opaque_id)
    try:
        result = services.assignment_save_draft(assignment=assignment, data=_form_data(payload))
    except ValidationError as exc:
        raise HttpError(409, _messages(exc))
    if result.rejected:
        return Status(
            422,
            {
                "detail": f"invalid values refused: {result.message}",
                "saved": result.saved,
                "rejected": result.rejected,
                "draft_version": result.state.version,
            },
        )
    return {"saved": result.saved, "draft_version": result.state.version}


@router.post("/review/groups/{opaque_id}/submit", response={200: SubmitOut, 400: SubmitOut})
def reviewer_submit(request, opaque_id: str, payload: GroupAnswersIn):
    assignment = _own(request, opaque_id)
    try:
        result = services.assignment_submit(assignment=assignment, data=_form_data(payload))
    except ValidationError as exc:
        raise HttpError(409, _messages(exc))
    body = {
        "submitted": result.ok,
        "errors": {k: dict(f.errors) for k, f in result.forms.items() if f.errors},
        "certify_error": result.certify_error,
    }
    return Status(200 if result.ok else 400, body)


@router.get("/review/tags/suggest", response=list[ReviewerTagOut])
def tag_suggest(request, q: str = ""):
    _require(request, REVIEWER, CURATOR, ADMIN)
    return selectors.reviewer_tag_suggestions(reviewer=request.user, query=q)


# --- curator schemas (see everything) -------------------------------------------------------


class RoundIn(Schema):
    name: str
    instructions: str = ""
    lineage_ids: list[int] = []
    root_public_ids: list[str] = []
    # Reasoning groups: each a list of 2-4 judged reasoning item ids.
    reasoning_item_groups: list[list[int]] = []
    reviewers: list[str]
    reviewers_per_group: int = 2
    exclude_creators: bool = True


class RoundOut(Schema):
    id: int
    name: str
    status: str
    reviewers_per_group: int
    exclude_creators: bool
    groups: int
    assignments: int
    created_at: datetime

    @staticmethod
    def resolve_groups(obj):
        return obj.groups.count()

    @staticmethod
    def resolve_assignments(obj):
        return Assignment.objects.filter(group__round=obj).count()


class ProgressOut(Schema):
    username: str
    groups: int
    submitted: int
    problems: int
    drafted: int
    seconds: float


class AgreementOut(Schema):
    dimension: str
    metric: str
    alpha: float | None
    kappa: float | None
    items: int
    pairs: int


class OverrideIn(Schema):
    item: str
    dimension: str
    value: str
    reason: str


class OverrideOut(Schema):
    item: str
    dimension: str
    value: str
    reason: str
    created_by: str | None
    created_at: datetime

    @staticmethod
    def resolve_item(obj):
        return obj.item.opaque_id

    @staticmethod
    def resolve_created_by(obj):
        return obj.created_by.username if obj.created_by else None


class AggregateOut(Schema):
    item: str
    group: str
    problem_public_id: str | None
    reasoning_item_id: int | None
    title: str
    kind: str
    lineage_position: int
    n_reviews: int
    means: dict[str, float | None]
    final: dict[str, float | str | None]
    overrides: list[OverrideOut]
    cf_estimate: float | None
    tags: list[str]
    validity_votes: dict[str, int]
    answer_votes: dict[str, int]
    answer_final: str | None
    open_adjudications: int


class AdjudicationOut(Schema):
    id: int
    item: str
    problem_public_id: str | None
    dimension: str
    detail: str
    status: str
    resolution: str
    resolved_value: str
    resolved_by: str | None

    @staticmethod
    def resolve_item(obj):
        return obj.item.opaque_id

    @staticmethod
    def resolve_problem_public_id(obj):
        return obj.item.problem.public_id if obj.item.problem_id else None

    @staticmethod
    def resolve_resolved_by(obj):
        return obj.resolved_by.username if obj.resolved_by else None


class AdjudicationResolveIn(Schema):
    resolution: str
    value: str = ""


class TagOut(Schema):
    id: int
    name: str
    status: str
    merged_into: str | None

    @staticmethod
    def resolve_merged_into(obj):
        return obj.merged_into.name if obj.merged_into else None


class TagMergeIn(Schema):
    into: int


def _round(request, round_id: int) -> ReviewRound:
    _require(request, CURATOR, ADMIN)
    return get_object_or_404(ReviewRound, pk=round_id)


@router.get("/review/rounds", response=list[RoundOut])
def round_list(request):
    _require(request, CURATOR, ADMIN)
    return list(selectors.round_list())


@router.post("/review/rounds", response={201: RoundOut})
def round_create(request, payload: RoundIn):
    _require(request, CURATOR, ADMIN)
    reviewers = list(get_user_model().objects.filter(username__in=payload.reviewers))
    missing = set(payload.reviewers) - {u.username for u in reviewers}
    if missing:
        raise HttpError(400, f"Unknown reviewer(s): {', '.join(sorted(missing))}.")
    not_reviewers = [u.username for u in reviewers if REVIEWER not in user_roles(u)]
    if not_reviewers:
        raise HttpError(400, f"Not reviewer(s): {', '.join(sorted(not_reviewers))}.")
    lineages = selectors.lineage_list(set(payload.lineage_ids))
    if len(lineages) != len(set(payload.lineage_ids)):
        raise HttpError(400, "Unknown lineage id(s).")
    roots = list(Problem.objects.filter(public_id__in=payload.root_public_ids))
    if len(roots) != len(set(payload.root_public_ids)):
        raise HttpError(400, "Unknown problem public id(s).")
    wanted = {pk for group in payload.reasoning_item_groups for pk in group}
    found = selectors.question_source().items_by_id(wanted) if wanted else {}
    if len(found) != len(wanted):
        missing_ids = ", ".join(str(pk) for pk in sorted(wanted - set(found)))
        raise HttpError(400, f"Unknown reasoning item id(s): {missing_ids}.")
    reasoning_groups = [[found[pk] for pk in group] for group in payload.reasoning_item_groups]
    try:
        review_round = services.round_create(
            name=payload.name,
            instructions=payload.instructions,
            created_by=request.user,
            reviewers=reviewers,
            lineages=lineages,
            roots=roots,
            reasoning_groups=reasoning_groups,
            reviewers_per_group=payload.reviewers_per_group,
            exclude_creators=payload.exclude_creators,
        )
    except ValidationError as exc:
        raise HttpError(400, _messages(exc))
    return Status(201, review_round)


@router.get("/review/rounds/{round_id}", response=RoundOut)
def round_detail(request, round_id: int):
    return _round(request, round_id)


@router.get("/review/rounds/{round_id}/progress", response=list[ProgressOut])
def round_progress(request, round_id: int):
    return selectors.round_progress(review_round=_round(request, round_id))


@router.get("/review/rounds/{round_id}/agreement", response=list[AgreementOut])
def round_agreement(request, round_id: int):
    return selectors.round_agreement(review_round=_round(request, round_id))


@router.get("/review/rounds/{round_id}/aggregates", response=list[AggregateOut])
def round_aggregates(request, round_id: int):
    aggregates = selectors.round_item_aggregates(review_round=_round(request, round_id))
    return [
        {
            "item": a.item.opaque_id,
            "group": a.group_opaque_id,
            "problem_public_id": a.problem.public_id if a.problem else None,
            "reasoning_item_id": a.reasoning_item.pk if a.reasoning_item else None,
            "title": a.label,
            "kind": a.problem.kind if a.problem else selectors.question_source().kind,
            "lineage_position": a.item.lineage_position,
            "n_reviews": a.n_reviews,
            "means": a.means,
            "final": a.final,
            "overrides": list(a.overrides.values()),
            "cf_estimate": a.cf_estimate,
            "tags": a.tags,
            "validity_votes": a.validity_votes,
            "answer_votes": a.answer_votes,
            "answer_final": a.answer_final,
            "open_adjudications": a.open_adjudications,
        }
        for a in aggregates
    ]


@router.get("/review/rounds/{round_id}/adjudications", response=list[AdjudicationOut])
def round_adjudications(request, round_id: int, status: str | None = None):
    return list(
        selectors.round_adjudications(review_round=_round(request, round_id), status=status)
    )


@router.post("/review/adjudications/{adjudication_id}/resolve", response=AdjudicationOut)
def adjudication_resolve(request, adjudication_id: int, payload: AdjudicationResolveIn):
    _require(request, CURATOR, ADMIN)
    adjudication = get_object_or_404(Adjudication, pk=adjudication_id)
    try:
        return services.adjudication_resolve(
            adjudication=adjudication,
            by=request.user,
            resolution=payload.resolution,
            value=payload.value,
        )
    except ValidationError as exc:
        raise HttpError(400, _messages(exc))


@router.post("/review/rounds/{round_id}/overrides", response={201: OverrideOut})
def score_override(request, round_id: int, payload: OverrideIn):
    review_round = _round(request, round_id)
    item = get_object_or_404(GroupItem, group__round=review_round, opaque_id=payload.item)
    try:
        override = services.score_override_create(
            item=item,
            dimension=payload.dimension,
            value=payload.value,
            reason=payload.reason,
            by=request.user,
        )
    except ValidationError as exc:
        raise HttpError(400, _messages(exc))
    return Status(201, override)


@router.get("/review/tags", response=list[TagOut])
def tag_list(request, status: str | None = None):
    _require(request, CURATOR, ADMIN)
    return list(selectors.tag_list(status=status))


@router.post("/review/tags/{tag_id}/approve", response=TagOut)
def tag_approve(request, tag_id: int):
    _require(request, CURATOR, ADMIN)
    try:
        return services.tag_approve(tag=get_object_or_404(Tag, pk=tag_id))
    except ValidationError as exc:
        raise HttpError(400, _messages(exc))


@router.post("/review/tags/{tag_id}/merge", response=TagOut)
def tag_merge(request, tag_id: int, payload: TagMergeIn):
    _require(request, CURATOR, ADMIN)
    tag = get_object_or_404(Tag, pk=tag_id)
    into = get_object_or_404(Tag, pk=payload.into)
    try:
        services.tag_merge(tag=tag, into=into)
    except ValidationError as exc:
        raise HttpError(400, _messages(exc))
    tag.refresh_from_db()
    return tag
