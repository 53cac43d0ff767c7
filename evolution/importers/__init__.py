"""Seed importers: HumanEval, LiveCodeBench JSONL, the project's own JSONL, and the rows
the Hub serves for CodeContests, APPS, TACO and SciCode.

``import_seeds`` is the one entry point (the ``import_seeds`` command and the
``POST /api/problem-sets/import`` operation both call it). An import is one transaction:
any bad line raises ``SeedImportError`` naming the line and field, and nothing is written.
Re-importing the same source ids creates no duplicates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction

from evolution.models import ProblemSet

from .apps import read_apps
from .codecontests import read_codecontests
from .errors import SeedImportError, Skipped
from .humaneval import read_humaneval
from .jsonl import read_jsonl
from .lcb import read_lcb
from .scicode import read_scicode
from .solutions import SOLUTIONS_FIELD, attach_solutions, read_solutions
from .store import RecordWriter
from .taco import read_taco

__all__ = ["SOURCES", "ImportReport", "SeedImportError", "Skipped", "import_seeds"]

SOURCES = ("humaneval", "lcb", "jsonl", "codecontests", "apps", "taco", "scicode")
_READERS = {
    "humaneval": read_humaneval,
    "lcb": read_lcb,
    "jsonl": read_jsonl,
    "codecontests": read_codecontests,
    "apps": read_apps,
    "taco": read_taco,
    "scicode": read_scicode,
}
# The set each source fills unless told otherwise; the project's JSONL names its own.
DEFAULT_SET_NAMES = {
    "humaneval": "humaneval",
    "lcb": "livecodebench",
    "jsonl": None,
    "codecontests": "codecontests",
    "apps": "apps",
    "taco": "taco",
    "scicode": "scicode",
}


@dataclass(frozen=True)
class ImportReport:
    created: int
    updated: int
    unchanged: int
    problem_set: ProblemSet
    # Imported problems whose record carries a reference solution.
    with_reference: int = 0
    # Rows a reader leaves out by rule (e.g. APPS / TACO call-based rows), never silently:
    # the count, and (line, reason) for the first ``SKIPPED_REASONS_KEPT`` of them.
    skipped: int = 0
    skipped_reasons: tuple[tuple[int, str], ...] = ()

    @property
    def total(self) -> int:
        return self.created + self.updated + self.unchanged

    def __str__(self) -> str:
        text = (
            f"{self.problem_set.name}: {self.created} created, {self.updated} updated, "
            f"{self.unchanged} unchanged ({self.problem_set.problems.count()} problems in set)"
        )
        return (
            text
            + f"; {self.with_reference} with a reference solution"
            + (f"; {self.skipped} skipped" if self.skipped else "")
        )


SKIPPED_REASONS_KEPT = 200


def import_seeds(
    *,
    source: str,
    path: str | None = None,
    set_name: str | None = None,
    content: str | None = None,
    solutions_path: str | None = None,
    solutions_content: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Import every problem of ``source`` into the ProblemSet ``set_name``.

    ``source`` is "humaneval" (reads the packaged file unless ``path``/``content`` is given),
    "lcb" or "jsonl" (both need ``path`` or ``content``, the text of the file). Problems
    are matched by public id or (origin_dataset, origin_id): new ones are created, changed
    ones overwritten, identical ones left alone; all end up in the set. Raises
    SeedImportError and writes nothing when any line is bad.

    ``solutions_path`` / ``solutions_content`` (lcb only) give the reference solutions
    LiveCodeBench does not publish, keyed by ``question_id`` (``evolution/importers/solutions.py``).

    ``progress`` (optional) is called with the line (or Parquet row) just read, after each
    record; it runs inside the import's transaction, so it must report elsewhere.
    """
    if source not in _READERS:
        raise SeedImportError(
            f"unknown source {source!r}; choose one of {', '.join(SOURCES)}", field="source"
        )
    if path is not None and content is not None:
        raise SeedImportError("give a file path or the file content, not both", field="content")
    if source != "humaneval" and path is None and content is None:
        raise SeedImportError(f"the {source} importer needs a file", field="content")
    if set_name is not None and not set_name.strip():
        raise SeedImportError("must not be blank", field="set_name")
    max_length = ProblemSet._meta.get_field("name").max_length
    if set_name is not None and len(set_name) > max_length:
        raise SeedImportError(f"must be at most {max_length} characters", field="set_name")
    solutions = None
    if solutions_path is not None or solutions_content is not None:
        if source != "lcb":
            raise SeedImportError(
                "a solutions file is read with the lcb source only (the project's JSONL "
                "carries reference_solution on each line)",
                field=SOLUTIONS_FIELD,
            )
        if solutions_path is not None and solutions_content is not None:
            raise SeedImportError(
                "give a solutions file path or its content, not both", field=SOLUTIONS_FIELD
            )
        solutions = read_solutions(path=solutions_path, content=solutions_content)
    writer = RecordWriter(source=source, set_name=set_name, default_set=DEFAULT_SET_NAMES[source])
    with_reference = skipped = 0
    reasons: list[tuple[int, str]] = []
    with transaction.atomic():
        records = _READERS[source](path=path, content=content)
        if solutions is not None:
            records = list(records)
            name = solutions_path.rsplit("/", 1)[-1] if solutions_path else "uploaded"
            attach_solutions(records, solutions, name=name)
        for line, record in records:
            if isinstance(record, Skipped):
                skipped += 1
                if len(reasons) < SKIPPED_REASONS_KEPT:
                    reasons.append((line, record.reason))
            else:
                writer.add(line, record)
                with_reference += bool((record.get("reference_solution") or "").strip())
            if progress is not None:
                progress(line)
        problem_set = writer.finish()
    return ImportReport(
        problem_set=problem_set,
        with_reference=with_reference,
        skipped=skipped,
        skipped_reasons=tuple(reasons),
        **writer.counts,
    )
