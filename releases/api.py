"""Release API. Listing published releases and their leaderboards needs no login; the gate,
its evaluation panel and independent evaluations, freezing, publishing, evaluations and full
exports need the curator role."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Literal

from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from ninja import Field, Query, Router, Schema, Status
from ninja.errors import HttpError

from accounts.roles import ADMIN, CURATOR, request_user, user_roles
from evolution.models import ModelEndpoint

from . import blinding, exports, independent, leaderboard, selectors, services
from .leaderboard import board
from .models import GateEvaluation, Release, ReleaseState
from .tasks import enqueue_leaderboard_run

router = Router(tags=["releases"])


def _require_curator(request) -> None:
    if not user_roles(request.user) & {ADMIN, CURATOR}:
        raise HttpError(403, "Your role does not allow this operation.")


def _bad(exc: ValidationError):
    raise HttpError(400, "; ".join(exc.messages))


class ReleaseOut(Schema):
    id: int
    benchmark: str
    slug: str
    version: str
    state: str
    content_hash: str
    item_count: int
    test_count: int
    published_at: datetime | None


class EstimateOut(Schema):
    value: float
    low: float
    high: float
    n: int


class LeaderboardRowOut(Schema):
    model: str
    source: str
    model_release_date: date | None
    samples: int
    pass1: EstimateOut | None
    k: str
    passk: EstimateOut | None
    clean: EstimateOut | None
    flagged: int | None  # None, like clean, while a problem of the release is rated blind
    # pass@1, pass@k and clean are over the pass/fail problems; open-ended (scored) problems
    # are measured apart by their verifier: Avg@k and Best@k (None without such problems).
    avgk: EstimateOut | None = None
    bestk: EstimateOut | None = None
    # False when the run's stored scores cannot be read: no scores, never a 500.
    available: bool = True


class GateOut(Schema):
    id: int
    candidates: int
    passed: int


class RunIn(Schema):
    endpoint_id: int
    samples: int = 4


class RunOut(Schema):
    id: int
    label: str
    state: str


def _release_out(r: Release) -> ReleaseOut:
    return ReleaseOut(
        id=r.pk,
        benchmark=r.benchmark.name,
        slug=r.benchmark.slug,
        version=r.version,
        state=r.state,
        content_hash=r.content_hash,
        item_count=r.item_count,
        test_count=r.test_count,
        published_at=r.published_at,
    )


@router.get("/releases", response=list[ReleaseOut], auth=None)
def list_releases(request):
    """Published releases for everyone; curators also see drafts and frozen ones. A user
    rating problems blind right now gets 403 (``releases.blinding``)."""
    blinding.refuse_api_while_rating_blind(request)
    # A script proves who it is with its API token, a browser with its session.
    user = request_user(request)
    if user is not None and user_roles(user) & {ADMIN, CURATOR}:
        rows = selectors.release_list()
    else:
        rows = selectors.public_release_list()
    return [_release_out(r) for r in rows]


def _published(release_id: int) -> Release:
    return get_object_or_404(
        Release.objects.select_related("benchmark"), pk=release_id, state=ReleaseState.PUBLISHED
    )


DATE_WINDOW_WITHHELD = (
    "The date window is withheld while reviewers rate problems of this release blind: an "
    "original problem's date is its contest's, so the window would tell them apart. Ask "
    "again without `after`, or once the review round is submitted."
)


@router.get("/releases/{release_id}/leaderboard", response=list[LeaderboardRowOut], auth=None)
def release_leaderboard(
    request,
    release_id: int,
    sort: str = "pass1",
    dir: Literal["asc", "desc"] = "desc",
    after: date | None = None,
    model: str = Query("", max_length=200),
):
    """The public page's controls: ``after`` keeps problems released on or after the date
    (scores recomputed over them), ``model`` keeps models whose name contains the text,
    ``sort``/``dir`` order by any column (``pass1``, ``passk``, ``clean``, ``model``,
    ``released``, ``avgk``, ``bestk``, ``d:<difficulty>``, ``o:<origin>``). While a problem
    of the release is under blind review, what splits the release by origin is withheld: no
    ``clean``/``d:``/``o:`` sort, ``clean`` and ``flagged`` are null, and ``after`` is refused
    (409). A user rating problems blind right now gets 403."""
    blinding.refuse_api_while_rating_blind(request)
    release = _published(release_id)
    blind = blinding.release_blind(release).counts_withheld
    if blind and after is not None:
        raise HttpError(409, DATE_WINDOW_WITHHELD)
    table = board.build(
        release=release,
        sort=sort,
        descending=dir == "desc",
        after=after,
        model=model,
        blind=blind,
    )
    return [
        LeaderboardRowOut(**{k: row[k] for k in LeaderboardRowOut.model_fields})
        for row in table.rows
    ]


def _release(release_id: int) -> Release:
    return get_object_or_404(Release.objects.select_related("benchmark"), pk=release_id)


@router.post("/releases/{release_id}/gate", response=GateOut)
def run_gate(request, release_id: int):
    _require_curator(request)
    try:
        run = services.gate_run_create(release=_release(release_id), by=request.user)
    except ValidationError as exc:
        _bad(exc)
    return GateOut(id=run.pk, candidates=run.candidates, passed=run.passed)


class EvaluationPanelIn(Schema):
    endpoint_ids: list[int]
    samples: int = 4
    exclude_selection_models: bool = False


class EvaluationPanelOut(Schema):
    endpoints: list[str]
    samples: int
    exclude_selection_models: bool
    configured: bool


class LeftOutModelOut(Schema):
    endpoint: str
    model: str
    why: str


class EvaluationProgressOut(Schema):
    planned: int
    answered: int
    judged: int
    infra_errors: int
    percent: int


class GapEstimateOut(Schema):
    value: float
    low: float
    high: float
    n: int


class GateEvaluationOut(Schema):
    id: int
    state: str
    error: str
    models: list[str]
    samples: int
    excluded: list[LeftOutModelOut]
    candidates: int
    progress: EvaluationProgressOut
    gap: GapEstimateOut | None
    summary: dict


def _panel_out(config: dict) -> EvaluationPanelOut:
    return EvaluationPanelOut(
        endpoints=[e.name for e in config["endpoints"]],
        samples=config["samples"],
        exclude_selection_models=config["exclude_selection_models"],
        configured=config["configured"],
    )


def _evaluation_out(evaluation: GateEvaluation) -> GateEvaluationOut:
    return GateEvaluationOut(
        id=evaluation.pk,
        state=evaluation.state,
        error=evaluation.error,
        models=sorted(evaluation.endpoints.values_list("name", flat=True)),
        samples=evaluation.samples,
        excluded=evaluation.excluded,
        candidates=len(evaluation.problems),
        progress=independent.progress(evaluation=evaluation),
        gap=evaluation.summary.get("gap"),
        summary=evaluation.summary,
    )


@router.get("/releases/{release_id}/evaluation-panel", response=EvaluationPanelOut)
def get_evaluation_panel(request, release_id: int):
    """The draft's evaluation panel for the gate's independent difficulty."""
    _require_curator(request)
    return _panel_out(independent.panel_settings(release=_release(release_id)))


@router.put("/releases/{release_id}/evaluation-panel", response=EvaluationPanelOut)
def set_evaluation_panel(request, release_id: int, payload: EvaluationPanelIn):
    _require_curator(request)
    release = _release(release_id)
    endpoints = list(ModelEndpoint.objects.filter(pk__in=payload.endpoint_ids))
    missing = sorted(set(payload.endpoint_ids) - {e.pk for e in endpoints})
    if missing:
        raise HttpError(400, f"Unknown endpoint id(s): {missing}.")
    try:
        independent.panel_update(
            release=release,
            endpoints=endpoints,
            samples=payload.samples,
            exclude_selection_models=payload.exclude_selection_models,
        )
    except ValidationError as exc:
        _bad(exc)
    return _panel_out(independent.panel_settings(release=release))


@router.post("/releases/{release_id}/independent-evaluations", response=GateEvaluationOut)
def start_independent_evaluation(request, release_id: int):
    """Queue the independent evaluation of the draft's candidates (the worker runs it)."""
    _require_curator(request)
    try:
        evaluation = services.gate_evaluation_start(release=_release(release_id), by=request.user)
    except ValidationError as exc:
        _bad(exc)
    return _evaluation_out(evaluation)


@router.get(
    "/releases/{release_id}/independent-evaluations/{evaluation_id}",
    response=GateEvaluationOut,
)
def get_independent_evaluation(request, release_id: int, evaluation_id: int):
    """Progress while it runs; the per-problem figures and the gap once completed."""
    _require_curator(request)
    evaluation = get_object_or_404(GateEvaluation, pk=evaluation_id, release_id=release_id)
    return _evaluation_out(evaluation)


# A row's id as the database can hold it.
RowId = Annotated[int, Field(ge=1, le=2_147_483_647)]


class BenchmarkIn(Schema):
    name: str = Field(..., min_length=1, max_length=120)
    slug: str = Field("", max_length=120)
    description: str = Field("", max_length=20_000)
    license: str = Field("cc-by-4.0", max_length=60)


class BenchmarkOut(Schema):
    id: int
    name: str
    slug: str
    license: str


class ReleaseIn(Schema):
    benchmark: str = Field(..., min_length=1, max_length=120, description="the benchmark's slug")
    version: str = Field(
        "1.0.0", pattern=r"^\d{1,6}\.\d{1,6}\.\d{1,6}$", description="MAJOR.MINOR.PATCH"
    )
    campaign_ids: list[RowId] = Field(default_factory=list, max_length=1000)
    problem_set_ids: list[RowId] = Field(default_factory=list, max_length=1000)
    notes: str = Field("", max_length=20_000)


@router.post("/benchmarks", response={201: BenchmarkOut})
def benchmark_new(request, payload: BenchmarkIn):
    """A new benchmark (curators and admins), as the curator's page makes one."""
    _require_curator(request)
    try:
        bench = services.benchmark_create(
            name=payload.name,
            slug=payload.slug,
            description=payload.description,
            license=payload.license,
        )
    except ValidationError as exc:
        _bad(exc)
    return Status(
        201, BenchmarkOut(id=bench.pk, name=bench.name, slug=bench.slug, license=bench.license)
    )


@router.post("/releases", response={201: ReleaseOut})
def release_new(request, payload: ReleaseIn):
    """A new release draft of a benchmark from campaigns and problem sets (curators and
    admins), as the curator's page makes one; then gate, include, freeze and publish."""
    from evolution.models import Campaign, ProblemSet

    from .models import Benchmark

    _require_curator(request)
    bench = Benchmark.objects.filter(slug=payload.benchmark).first()
    if bench is None:
        raise HttpError(400, f"benchmark: no benchmark with the slug {payload.benchmark!r}")
    campaigns = list(Campaign.objects.filter(pk__in=payload.campaign_ids))
    sets = list(ProblemSet.objects.filter(pk__in=payload.problem_set_ids))
    missing = sorted(set(payload.campaign_ids) - {c.pk for c in campaigns})
    missing_sets = sorted(set(payload.problem_set_ids) - {p.pk for p in sets})
    if missing or missing_sets:
        raise HttpError(
            400,
            "; ".join(
                part
                for part in (
                    f"campaign_ids: no campaign {missing}" if missing else "",
                    f"problem_set_ids: no problem set {missing_sets}" if missing_sets else "",
                )
                if part
            ),
        )
    try:
        release = services.release_create(
            benchmark=bench,
            version=payload.version,
            campaigns=campaigns,
            problem_sets=sets,
            notes=payload.notes,
            created_by=request.user,
        )
    except ValidationError as exc:
        _bad(exc)
    return Status(201, _release_out(release))


@router.post("/releases/{release_id}/freeze", response=ReleaseOut)
def freeze(request, release_id: int):
    _require_curator(request)
    try:
        release = services.release_freeze(release=_release(release_id), by=request.user)
    except ValidationError as exc:
        _bad(exc)
    return _release_out(release)


@router.post("/releases/{release_id}/publish", response=ReleaseOut)
def publish(request, release_id: int):
    _require_curator(request)
    try:
        release = services.release_publish(release=_release(release_id))
    except ValidationError as exc:
        _bad(exc)
    return _release_out(release)


@router.post("/releases/{release_id}/runs", response=RunOut)
def create_run(request, release_id: int, payload: RunIn):
    _require_curator(request)
    endpoint = get_object_or_404(ModelEndpoint, pk=payload.endpoint_id)
    try:
        run = leaderboard.run_create(
            release=_release(release_id),
            endpoint=endpoint,
            samples=payload.samples,
            by=request.user,
        )
    except ValidationError as exc:
        _bad(exc)
    enqueue_leaderboard_run(run.pk)
    return RunOut(id=run.pk, label=run.label, state=run.state)


@router.get("/releases/{release_id}/export/{fmt}")
def export(request, release_id: int, fmt: str):
    """The full export (hidden tests included) in lcb, jsonl, hf or rl."""
    _require_curator(request)
    release = _release(release_id)
    if release.state == ReleaseState.DRAFT:
        raise HttpError(409, "A draft has no exports; freeze it first.")
    if fmt not in exports.FORMATS:
        raise HttpError(404, f"Unknown format; choose one of {', '.join(exports.FORMATS)}.")
    content_type, suffix = exports.FORMATS[fmt]
    response = HttpResponse(exports.export_bytes(release, fmt), content_type=content_type)
    name = f"{release.benchmark.slug}-v{release.version}-{suffix}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
