"""Writes seed records into the database: create, update or leave unchanged, by identity.

A record is the dict the readers produce: every column named in
``evolution.exporters.jsonl.PROBLEM_FIELDS`` plus ``parent`` / ``lineage_root`` (public ids
or None), ``tests`` (tier, ordinal, hidden, input, output, provenance) and, from the
project's JSONL only, ``public_id`` and ``problem_set``.

Identity: the record's ``public_id`` when it names an existing problem, else
(``origin_dataset``, ``origin_id``) when ``origin_id`` is set. A problem found by identity is
"unchanged" when its exported form equals the record (the public id aside), else its
columns are overwritten and its tests replaced: "updated". Which reference a record carries
by then (the stored one kept, or the import's once it passed its tests) is decided before it
gets here (``references.py``).
"""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from evolution.exporters.jsonl import PROBLEM_FIELDS, problem_record, sort_tests
from evolution.models import Problem, ProblemSet, TestCase

from .errors import SeedImportError
from .reading import check_size

# Keys of a record that are about where it goes, not what the problem is.
_NOT_COMPARED = ("format", "public_id", "problem_set", "member")
# The columns an update writes (``_apply``), with ``updated_at`` (auto_now: set by hand, as
# ``bulk_update`` does not).
_UPDATED = [*PROBLEM_FIELDS, "contest_date", "parent", "lineage_root", "updated_at"]


def _check_sizes(line: int, record: dict) -> None:
    """Every reader's record is bounded the same way, before anything is stored."""
    check_size(record["statement"], limit_name="MAX_STATEMENT_BYTES", line=line, field="statement")
    for field in ("reference_solution", "starter_code"):
        check_size(record[field] or "", limit_name="MAX_SOLUTION_BYTES", line=line, field=field)
    for index, test in enumerate(record["tests"]):
        for key in ("input", "output"):
            check_size(
                test[key] or "",
                limit_name="MAX_TEST_BYTES",
                line=line,
                field=f"tests[{index}].{key}",
            )


class RecordWriter:
    """Feeds records into one ProblemSet; call inside ``transaction.atomic()``.

    Writes in batches: ``find_many`` reads the problems a batch of records would update in
    two queries (their tests and lineage links with them), ``add`` decides and checks each
    record and keeps its write pending, ``flush`` writes every pending one at once (new
    problems, changed problems, their old tests deleted and new tests inserted: a query or so
    per kind and batch, not per problem). ``last_problem`` has its primary key only once
    flushed."""

    def __init__(self, *, source: str, set_name: str | None, default_set: str | None):
        self.source = source
        self.requested_set = set_name
        self.default_set = default_set
        self.problem_set: ProblemSet | None = None
        self.counts = {"created": 0, "updated": 0, "unchanged": 0}
        self._seen: dict[object, int] = {}
        self.last_problem: Problem | None = None
        self._found: dict[int, Problem | None] = {}
        self._written: set[int] = set()
        # Problems read or written by this import, by public id: lineage links resolve here.
        self._known: dict[str, Problem] = {}
        # Writes not flushed yet: (line, problem, record, created).
        self._pending: list[tuple[int, Problem, dict, bool]] = []
        self._members: list[Problem] = []

    def check(self, line: int, record: dict) -> None:
        """Refuse an oversized record as soon as it is read (before its reference is run)."""
        _check_sizes(line, record)

    def find_many(self, batch: list[tuple[int, dict]]) -> None:
        """Read the problems the records of ``batch`` would update, for ``stored_problem``, in
        two queries (with their tests and lineage links): by public id, then by origin."""
        for line, record in batch:
            self._ensure_set(line, record.get("problem_set"))
        problems = Problem.objects.select_related("parent", "lineage_root").prefetch_related(
            "tests"
        )
        wanted = {r["public_id"] for _, r in batch if r.get("public_id")}
        by_id = {p.public_id: p for p in problems.filter(public_id__in=wanted)} if wanted else {}
        origins = {
            (r["origin_dataset"], r["origin_id"])
            for _, r in batch
            if r["origin_id"] and by_id.get(r.get("public_id")) is None
        }
        by_origin: dict[tuple, Problem] = {}
        if origins:
            match = Q()
            for dataset, origin_id in origins:
                match |= Q(origin_dataset=dataset, origin_id=origin_id)
            for p in problems.filter(match).order_by(*Problem._meta.ordering):
                by_origin.setdefault((p.origin_dataset, p.origin_id), p)  # as .first()
        for _, record in batch:
            found = by_id.get(record.get("public_id")) if record.get("public_id") else None
            if found is None and record["origin_id"]:
                found = by_origin.get((record["origin_dataset"], record["origin_id"]))
            self._found[id(record)] = found

    def stored_problem(self, line: int, record: dict) -> Problem | None:
        """The problem the record would update (None: it creates one); ``add`` uses it
        unless a record written since changed that problem. Read by ``find_many`` when it
        was given the record's batch."""
        self._ensure_set(line, record.get("problem_set"))
        if id(record) in self._found:
            return self._found[id(record)]
        found = self._find(record)
        self._found[id(record)] = found
        return found

    def add(self, line: int, record: dict) -> str:
        """Store one record (checked with ``check``; written by the next ``flush``); return
        "created", "updated" or "unchanged". ``last_problem`` is then its problem."""
        self._ensure_set(line, record.get("problem_set"))
        self._reject_repeat(line, record)
        # Found when its reference was settled; found again only if a record written since
        # changed that problem (a record matching a problem created since is a repeat).
        problem = self._found.pop(id(record), False)
        if problem is False or (problem is not None and problem.pk in self._written):
            self.flush()
            problem = self._find(record)
        if problem is None:
            outcome = "created"
            problem = (
                Problem(public_id=record["public_id"]) if record.get("public_id") else Problem()
            )
        elif self._same(problem, record):
            outcome = "unchanged"
        else:
            outcome = "updated"
        if outcome != "unchanged":
            self._apply(line, problem, record)
            self._pending.append((line, problem, record, outcome == "created"))
            if problem.pk is not None:
                self._written.add(problem.pk)
        self._known[problem.public_id] = problem
        # An ancestor carried only for its descendants' links stays out of the set.
        if record.get("member", True):
            self._members.append(problem)
        self.last_problem = problem
        self.counts[outcome] += 1
        return outcome

    def finish(self) -> ProblemSet:
        if self.problem_set is None:
            raise SeedImportError("the input holds no problems; nothing was imported")
        self.flush()
        self.problem_set.problems.add(*(p.pk for p in self._members))
        return self.problem_set

    def _ensure_set(self, line: int, line_set: str | None) -> None:
        wanted = self.requested_set
        if wanted is None:
            if self.problem_set is not None and line_set not in (None, self.problem_set.name):
                raise SeedImportError(
                    f"names set {line_set!r} but earlier lines name {self.problem_set.name!r}",
                    line=line,
                    field="problem_set",
                )
            wanted = line_set or self.default_set
        if wanted is None:
            raise SeedImportError(
                "no problem set named: pass one (--set NAME) or fill problem_set",
                line=line,
                field="problem_set",
            )
        if self.problem_set is None:
            problem_set, _ = ProblemSet.objects.get_or_create(
                name=wanted, defaults={"source": self.source}
            )
            # Serialise concurrent imports into the same set: they would race on identities.
            self.problem_set = ProblemSet.objects.select_for_update().get(pk=problem_set.pk)

    def _reject_repeat(self, line: int, record: dict) -> None:
        keys = []
        if record.get("public_id"):
            keys.append(("public_id", record["public_id"]))
        if record["origin_id"]:
            keys.append(("origin", record["origin_dataset"], record["origin_id"]))
        for key in keys:
            if key in self._seen:
                raise SeedImportError(
                    f"repeats the problem {key[-1]!r} already given on line {self._seen[key]}",
                    line=line,
                    field="public_id" if key[0] == "public_id" else "origin_id",
                )
            self._seen[key] = line

    def _find(self, record: dict) -> Problem | None:
        if record.get("public_id"):
            found = Problem.objects.filter(public_id=record["public_id"]).first()
            if found is not None:
                return found
        if record["origin_id"]:
            return Problem.objects.filter(
                origin_dataset=record["origin_dataset"], origin_id=record["origin_id"]
            ).first()
        return None

    def _same(self, problem: Problem, record: dict) -> bool:
        current = problem_record(problem)
        incoming = dict(record, tests=sort_tests(record["tests"]))
        for key in _NOT_COMPARED:
            current.pop(key, None)
            incoming.pop(key, None)
        return current == incoming

    def _apply(self, line: int, problem: Problem, record: dict) -> None:
        """Set the record's columns on ``problem`` and check them (written by ``flush``)."""
        for field in PROBLEM_FIELDS:
            setattr(problem, field, record[field])
        if record["contest_date"] is not None:
            problem.contest_date = datetime.fromisoformat(record["contest_date"])
        problem.parent = self._lineage_link(line, record, "parent")
        problem.lineage_root = self._lineage_link(line, record, "lineage_root")
        try:
            # Field checks only (lengths, choices) to name the field. The readers already
            # enforce the table's CHECK and UNIQUE rules and the database backs them; letting
            # Django re-check them costs five queries per problem.
            problem.full_clean(validate_unique=False, validate_constraints=False)
        except ValidationError as exc:
            field, messages = next(iter(exc.message_dict.items()))
            raise SeedImportError("; ".join(messages), line=line, field=field)

    def flush(self) -> None:
        """Write every pending record: the new problems in one insert, the changed ones in one
        update, their old tests deleted and every new test inserted in bulk. A row the
        database refuses is found by writing the batch again one problem at a time, to name
        its line (the import fails and writes nothing either way)."""
        pending, self._pending = self._pending, []
        if not pending:
            return
        try:
            with transaction.atomic():
                self._write_all(pending)
        except IntegrityError as exc:
            for line, problem, _record, created in pending:
                if created:
                    problem.pk = None
                    problem._state.adding = True
                try:
                    with transaction.atomic():
                        problem.save()
                except IntegrityError as refused:
                    raise SeedImportError(
                        f"the database refused the problem ({refused})", line=line
                    )
            raise SeedImportError(f"the database refused the problems ({exc})", line=pending[0][0])

    def _write_all(self, pending: list) -> None:
        created = [problem for _, problem, _, new in pending if new]
        changed = [problem for _, problem, _, new in pending if not new]
        Problem.objects.bulk_create(created, batch_size=500)
        if changed:
            now = timezone.now()
            for problem in changed:
                problem.updated_at = now
            Problem.objects.bulk_update(changed, _UPDATED, batch_size=500)
            TestCase.objects.filter(problem__in=changed).delete()
        rows = []
        for _, problem, record, _ in pending:
            self._written.add(problem.pk)
            for test in record["tests"]:
                row = TestCase(
                    problem=problem,
                    tier=test["tier"],
                    ordinal=test["ordinal"],
                    hidden=test["hidden"],
                    provenance=test["provenance"],
                )
                row.input = test["input"]
                row.output = test["output"]
                rows.append(row)
        TestCase.objects.bulk_create(rows, batch_size=500)

    def _lineage_link(self, line: int, record: dict, key: str) -> Problem | None:
        public_id = record.get(key)
        if public_id is None:
            return None
        found = self._known.get(public_id)
        if found is not None and found.pk is None:
            self.flush()  # written on an earlier line of this batch
        if found is None:
            found = Problem.objects.filter(public_id=public_id).first()
        if found is None:
            raise SeedImportError(
                f"names {public_id!r}, which is neither in the database nor on an earlier "
                "line (export the ancestors too)",
                line=line,
                field=key,
            )
        return found
