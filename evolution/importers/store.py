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
from django.db import IntegrityError

from evolution.exporters.jsonl import PROBLEM_FIELDS, problem_record, sort_tests
from evolution.models import Problem, ProblemSet, TestCase

from .errors import SeedImportError
from .reading import check_size

# Keys of a record that are about where it goes, not what the problem is.
_NOT_COMPARED = ("format", "public_id", "problem_set", "member")


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
    """Feeds records into one ProblemSet; call inside ``transaction.atomic()``."""

    def __init__(self, *, source: str, set_name: str | None, default_set: str | None):
        self.source = source
        self.requested_set = set_name
        self.default_set = default_set
        self.problem_set: ProblemSet | None = None
        self.counts = {"created": 0, "updated": 0, "unchanged": 0}
        self._member_ids: list[int] = []
        self._seen: dict[object, int] = {}
        self.last_problem: Problem | None = None
        self._found: dict[int, Problem | None] = {}
        self._written: set[int] = set()

    def check(self, line: int, record: dict) -> None:
        """Refuse an oversized record as soon as it is read (before its reference is run)."""
        _check_sizes(line, record)

    def stored_problem(self, line: int, record: dict) -> Problem | None:
        """The problem the record would update (None: it creates one); ``add`` uses it
        unless a record written since changed that problem."""
        self._ensure_set(line, record.get("problem_set"))
        found = self._find(record)
        self._found[id(record)] = found
        return found

    def add(self, line: int, record: dict) -> str:
        """Store one record (checked with ``check``); return "created", "updated" or
        "unchanged". ``last_problem`` is then its problem."""
        self._ensure_set(line, record.get("problem_set"))
        self._reject_repeat(line, record)
        # Found when its reference was settled; found again only if a record written since
        # changed that problem (a record matching a problem created since is a repeat).
        problem = self._found.pop(id(record), False)
        if problem is False or (problem is not None and problem.pk in self._written):
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
            self._write(line, problem, record)
            self._written.add(problem.pk)
        # An ancestor carried only for its descendants' links stays out of the set.
        if record.get("member", True):
            self._member_ids.append(problem.pk)
        self.last_problem = problem
        self.counts[outcome] += 1
        return outcome

    def finish(self) -> ProblemSet:
        if self.problem_set is None:
            raise SeedImportError("the input holds no problems; nothing was imported")
        self.problem_set.problems.add(*self._member_ids)
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

    def _write(self, line: int, problem: Problem, record: dict) -> None:
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
        try:
            problem.save()
        except IntegrityError as exc:
            raise SeedImportError(f"the database refused the problem ({exc})", line=line)
        problem.tests.all().delete()
        rows = []
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
        TestCase.objects.bulk_create(rows)

    def _lineage_link(self, line: int, record: dict, key: str) -> Problem | None:
        public_id = record.get(key)
        if public_id is None:
            return None
        found = Problem.objects.filter(public_id=public_id).first()
        if found is None:
            raise SeedImportError(
                f"names {public_id!r}, which is neither in the database nor on an earlier "
                "line (export the ancestors too)",
                line=line,
                field=key,
            )
        return found
