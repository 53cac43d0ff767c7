"""Problem-set API: list the seed sets, import one (admin only)."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Count
from ninja import Router, Schema
from ninja.errors import HttpError

from benchapp.roles import ADMIN, CURATOR, has_role
from evolution.importers import SOURCES, SeedImportError, import_seeds
from evolution.models import ProblemSet

router = Router(tags=["problem sets"])


class ProblemSetImportIn(Schema):
    # A plain str, not a Literal: a wrong source is a 400 naming the field like any other
    # bad input, not a 422 with a different body.
    source: str
    content: str | None = None
    set_name: str | None = None
    # lcb only: the solutions file's text (JSONL of {question_id, solution}).
    solutions: str | None = None


class ProblemSetImportOut(Schema):
    problem_set: str
    created: int
    updated: int
    unchanged: int
    problems_in_set: int
    with_reference: int
    skipped: int
    # (line, reason) of the skipped rows, the first 200.
    skipped_reasons: list[tuple[int, str]]


class ImportErrorOut(Schema):
    detail: str
    line: int | None
    field: str | None


class DetailOut(Schema):
    detail: str


class ProblemSetOut(Schema):
    name: str
    description: str
    source: str
    problem_count: int
    created_at: datetime


def _require(request, role: str) -> None:
    if not has_role(request.auth, role):
        raise HttpError(403, f"Only the {role} role may do this.")


@router.post(
    "/problem-sets/import",
    response={200: ProblemSetImportOut, 400: ImportErrorOut, 403: DetailOut},
    summary="Import seed problems into a set (admin)",
    description=(
        f"`source` is one of {', '.join(SOURCES)}. `content` is the JSONL text (required for "
        "every source but humaneval, which reads the packaged problems when it is omitted). "
        "`with_reference` counts the imported problems that carry a reference solution, "
        "`skipped` the rows left out by rule (call-based APPS / TACO rows, SciCode steps "
        "without gold code). `solutions` (lcb only) is the text of a solutions file, one "
        "`{question_id, solution}` a line. One "
        "transaction: a bad line returns 400 naming the line and field, and nothing is written."
    ),
)
def problem_set_import(request, payload: ProblemSetImportIn):
    _require(request, ADMIN)
    try:
        report = import_seeds(
            source=payload.source,
            content=payload.content,
            set_name=payload.set_name,
            solutions_content=payload.solutions,
        )
    except SeedImportError as exc:
        return 400, {"detail": str(exc), "line": exc.line, "field": exc.field}
    return 200, {
        "problem_set": report.problem_set.name,
        "created": report.created,
        "updated": report.updated,
        "unchanged": report.unchanged,
        "problems_in_set": report.problem_set.problems.count(),
        "with_reference": report.with_reference,
        "skipped": report.skipped,
        "skipped_reasons": [list(pair) for pair in report.skipped_reasons],
    }


@router.get(
    "/problem-sets",
    response={200: list[ProblemSetOut], 403: DetailOut},
    summary="Problem sets with their sizes (admin, curator)",
)
def problem_set_list(request):
    _require(request, CURATOR)  # admins hold the curator role too
    return 200, ProblemSet.objects.annotate(problem_count=Count("problems")).order_by("name")
