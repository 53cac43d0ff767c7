"""Problem-set API: list the seed sets, import one (admin only)."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Count
from ninja import Router, Schema, Status
from ninja.errors import HttpError

from accounts.roles import ADMIN, CURATOR, has_role
from evolution.importers import SOURCES, SeedImportError, import_seeds, reference_summary
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
    # The import's references replace (or, where it gives none, drop) the problems' own.
    replace_references: bool = False


class ReferenceNoteOut(Schema):
    origin_id: str
    public_id: str
    title: str
    # kept (the import's differs, the stored one stays), replaced, dropped, refused
    action: str
    # A refused reference: what went wrong, on which test ("public test #0").
    detail: str
    test: str
    # Provenance of the import's reference and of the one the problem had ({} for none),
    # and each in words ("solutions file sols.jsonl, line 3").
    offered: dict
    offered_origin: str
    previous: dict
    previous_origin: str


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
    # Problems that kept their reference (the import's differs or is absent), had it
    # replaced or dropped (replace_references), or had the import's refused by its tests.
    references_kept: int
    references_replaced: int
    references_dropped: int
    references_refused: int
    # One per problem whose reference was refused, replaced, dropped, or kept against a
    # different one from the import.
    references: list[ReferenceNoteOut]


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
        "`{question_id, solution}` a line. A problem keeps the reference it has unless "
        "`replace_references` (then the import's replaces it, or its absence drops it). A "
        "reference from a solutions file or a dataset's record is run on the record's public and "
        "private tests first: one that fails is refused (the problem is imported without it) "
        "and listed in `references` with the failing `test`, as are replaced, dropped and kept "
        "ones. One "
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
            replace_references=payload.replace_references,
        )
    except SeedImportError as exc:
        return Status(400, {"detail": str(exc), "line": exc.line, "field": exc.field})
    return Status(
        200,
        {
            "problem_set": report.problem_set.name,
            "created": report.created,
            "updated": report.updated,
            "unchanged": report.unchanged,
            "problems_in_set": report.problem_set.problems.count(),
            "with_reference": report.with_reference,
            "skipped": report.skipped,
            "skipped_reasons": [list(pair) for pair in report.skipped_reasons],
            **reference_summary(report),
        },
    )


@router.get(
    "/problem-sets",
    response={200: list[ProblemSetOut], 403: DetailOut},
    summary="Problem sets with their sizes (admin, curator)",
)
def problem_set_list(request):
    _require(request, CURATOR)  # admins hold the curator role too
    return Status(
        200, ProblemSet.objects.annotate(problem_count=Count("problems")).order_by("name")
    )
