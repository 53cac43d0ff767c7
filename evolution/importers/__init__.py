"""Seed importers: HumanEval, LiveCodeBench JSONL, the project's own JSONL, and the rows
the Hub serves for CodeContests, APPS, TACO and SciCode.

``import_seeds`` is the one entry point (the ``import_seeds`` command, the
``POST /api/problem-sets/import`` operation and the admin import page all call it). An import is
one transaction: any bad line raises ``SeedImportError`` naming the line and field, and nothing
is written. Re-importing the same source ids creates no duplicates, and keeps the references
the problems have unless told to replace them (``references.py``). Every seed an import writes
joins the contamination screen's index (``evolution.screening``) in the same transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import transaction

from evolution.models import Problem, ProblemSet
from evolution.screening import services as screening

from .apps import read_apps
from .codecontests import read_codecontests
from .errors import SeedImportError, Skipped
from .humaneval import read_humaneval
from .jsonl import read_jsonl
from .lcb import read_lcb
from .reading import refuse_nul
from .references import ACTIONS as REFERENCE_ACTIONS
from .references import ReferenceLedger, ReferenceNote
from .scicode import read_scicode
from .solutions import SOLUTIONS_FIELD, attach_solutions, read_solutions
from .store import RecordWriter
from .taco import read_taco

__all__ = [
    "SOURCES",
    "ImportReport",
    "ReferenceNote",
    "SeedImportError",
    "Skipped",
    "import_seeds",
    "reference_summary",
]

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
    # What became of references (evolution/importers/references.py): how many problems kept
    # theirs against the import (or without one from it), had it replaced, dropped, or had the
    # import's refused; and a note per problem for all but the silent keeps.
    reference_counts: dict = field(default_factory=lambda: dict.fromkeys(REFERENCE_ACTIONS, 0))
    references: tuple[ReferenceNote, ...] = ()

    @property
    def total(self) -> int:
        return self.created + self.updated + self.unchanged

    def __str__(self) -> str:
        text = (
            f"{self.problem_set.name}: {self.created} created, {self.updated} updated, "
            f"{self.unchanged} unchanged ({self.problem_set.problems.count()} problems in set)"
        )
        counts = self.reference_counts
        changes = ", ".join(
            f"{counts[action]} {action}"
            for action in ("kept", "replaced", "dropped")
            if counts.get(action)
        )
        refused = counts.get("refused", 0)
        return (
            text
            + f"; {self.with_reference} with a reference solution"
            + (f" ({changes})" if changes else "")
            + (f"; {refused} reference{'s' if refused != 1 else ''} refused" if refused else "")
            + (f"; {self.skipped} skipped" if self.skipped else "")
        )


def reference_summary(report: ImportReport) -> dict:
    """The report's references as the API and the admin import page give them."""
    return {
        **{f"references_{action}": report.reference_counts[action] for action in REFERENCE_ACTIONS},
        "references": [note.to_dict() for note in report.references],
    }


SKIPPED_REASONS_KEPT = 200
# Records are written in batches whose references are judged as one workload: at most this many
# records, or this many bytes of tests, held at once.
BATCH_RECORDS = 64
BATCH_TEST_BYTES = 32 * 1024 * 1024


def import_seeds(
    *,
    source: str,
    path: str | None = None,
    set_name: str | None = None,
    content: str | None = None,
    solutions_path: str | None = None,
    solutions_content: str | None = None,
    replace_references: bool = False,
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

    References (``references.py``): a problem keeps the reference it has unless
    ``replace_references`` (then the import's replaces it, or its absence drops it); a reference
    from a solutions file or a dataset's record is stored only once it passed the record's own
    tests in the sandbox, else it is refused and noted in the report with the failing test.

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
    # The project's JSONL is BenchForge's own export: its references are stored as given.
    ledger = ReferenceLedger(replace=replace_references, verify=source != "jsonl")
    with_reference = skipped = 0
    reasons: list[tuple[int, str]] = []
    batch: list[tuple[int, dict]] = []
    batch_bytes = 0
    stored_ids: list[int] = []

    def write_batch() -> int:
        """Settle the batch's references (one judge workload), then write its records in order,
        in bulk (``RecordWriter.flush``); returns how many of them carry a reference."""
        writer.find_many(batch)
        ledger.settle(
            [(line, record, writer.stored_problem(line, record)) for line, record in batch]
        )
        count = 0
        written = []
        for line, record in batch:
            writer.add(line, record)
            written.append(writer.last_problem)
            ledger.stored(record, writer.last_problem.public_id)
            count += bool((record.get("reference_solution") or "").strip())
        writer.flush()  # the batch's problems and tests, written in bulk
        stored_ids.extend(problem.pk for problem in written)
        batch.clear()
        return count

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
                # Also what a reader decoded (LiveCodeBench's packed private tests): a NUL
                # reaching the database would fail the whole import with a DataError.
                refuse_nul(record, line=line)
                writer.check(line, record)
                batch.append((line, record))
                batch_bytes += sum(len(t["input"]) + len(t["output"]) for t in record["tests"])
                if len(batch) >= BATCH_RECORDS or batch_bytes >= BATCH_TEST_BYTES:
                    with_reference += write_batch()
                    batch_bytes = 0
            if progress is not None:
                progress(line)
        with_reference += write_batch()
        problem_set = writer.finish()
        # The contamination screen's index grows with every import (docs/screening.md): the
        # seeds written or left unchanged here, each indexed again only if it changed.
        screening.index_problems(Problem.objects.filter(pk__in=stored_ids).order_by("id"))
    return ImportReport(
        problem_set=problem_set,
        with_reference=with_reference,
        skipped=skipped,
        skipped_reasons=tuple(reasons),
        reference_counts=dict(ledger.counts),
        references=tuple(ledger.notes),
        **writer.counts,
    )
