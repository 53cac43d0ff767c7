"""Writes and queries of the contamination screen: index public problems, screen a problem.

**What is indexed.** Every seed problem (``kind`` "seed": what the importers create from a
public corpus) with its statement and reference solution. ``index_problems`` is called by the
import service for the problems of each import (a changed problem is indexed again, an unchanged
one skipped by its digest); ``rebuild`` indexes every seed and drops rows of problems that are no
longer seeds (``manage.py screening_index --rebuild``).

**A screen.** The statement's and the reference solution's signatures are compared with every
indexed problem; the similarity of a pair is the larger of the two estimates (a problem recalled
with its wording changed still has its program, one re-themed around the same program keeps
its statement). The screen keeps the ``NEAREST`` most similar public problems and every other one
at ``KEEP_FLOOR`` or above (at most ``KEEP_MOST``), so a rule on problems dated before a day can
read them. The problem's own lineage is never a contamination: its seed, its ancestors, and the
public problems that are copies of its seed (similarity to the seed at ``SEED_COPY`` or above:
APPS and TACO share problems, as CodeForces' ones are in LiveCodeBench and CodeContests) are
listed apart, under "lineage", and not counted in ``max_similarity``.

The record a screen stores (``ProblemScreen.record``, the ledger entry's fields, what the gate
reads)::

    {"screened_at", "index": {"version", "problems", "corpora": {dataset: {"problems", "dated",
     "first", "last"}}, "method"}, "statement_shingles", "code_shingles",
     "neighbours": [{"problem_id", "public_id", "title", "dataset", "origin_id", "date",
                     "statement", "code", "similarity"}, ...],
     "lineage": [{... the same, "relation"}], "max_similarity"}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime

import numpy as np
from django.db import transaction
from django.utils import timezone

from evolution.models import Problem
from evolution.models.problems import ProblemKind

from . import index, shingles, signatures
from .describe import corpora_text, nearest_text
from .models import IndexedProblem, ProblemScreen

NEAREST = 5
KEEP_FLOOR = 0.2
KEEP_MOST = 50
SEED_COPY = 0.5
METHOD = (
    f"{signatures.LIBRARY} ({signatures.NUM_PERM} permutations) over word "
    f"{shingles.STATEMENT_SHINGLE}-shingles of the normalised statement and token "
    f"{shingles.CODE_SHINGLE}-shingles of the reference solution with its own identifiers "
    "renamed; similarity = the larger of the two estimates"
)
BATCH = 500


# --- indexing ---------------------------------------------------------------------------------


def published_on(problem: Problem) -> date | None:
    """When the problem became public: its contest date, else a date its record carries."""
    if problem.contest_date is not None:
        return problem.contest_date.date()
    raw = (problem.metadata or {}).get("date")
    if isinstance(raw, str) and raw.strip():
        try:
            return datetime.fromisoformat(raw.strip()[:10]).date()
        except ValueError:
            return None
    return None


@dataclass
class IndexReport:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0

    @property
    def indexed(self) -> int:
        return self.added + self.updated + self.unchanged

    def __str__(self) -> str:
        return (
            f"{self.added} added, {self.updated} updated, {self.unchanged} unchanged, "
            f"{self.removed} removed"
        )


def _rows(problems: list[Problem]) -> list[IndexedProblem]:
    statement_sets = [shingles.statement_shingles(p.statement) for p in problems]
    code_sets = [shingles.code_shingles(p.reference_solution) for p in problems]
    statement_sigs = signatures.signatures(statement_sets)
    code_sigs = signatures.signatures(code_sets)
    rows = []
    for p, s_set, c_set, s_sig, c_sig in zip(
        problems, statement_sets, code_sets, statement_sigs, code_sigs, strict=True
    ):
        day = published_on(p)
        rows.append(
            IndexedProblem(
                problem=p,
                origin_dataset=p.origin_dataset or "unnamed",
                origin_id=p.origin_id,
                published_on=day,
                statement_signature=signatures.to_bytes(s_sig),
                code_signature=signatures.to_bytes(c_sig) if c_set else None,
                statement_shingles=len(s_set),
                code_shingles=len(c_set),
                digest=_digest(p, day),
            )
        )
    return rows


def _digest(problem: Problem, day: date | None) -> str:
    return signatures.digest(
        problem.statement,
        problem.reference_solution,
        (problem.origin_dataset, problem.origin_id, day.isoformat() if day else ""),
    )


@transaction.atomic
def index_problems(problems: Iterable[Problem]) -> IndexReport:
    """Add the seeds among ``problems`` to the index, or index them again where they changed
    (a changed row is deleted and written anew, which is how other processes see it);
    problems that are not seeds are left out (and dropped from the index if they were in it)."""
    report = IndexReport()
    chosen = [p for p in problems if p.pk is not None]
    stale = [p.pk for p in chosen if p.kind != ProblemKind.SEED]
    if stale:
        report.removed += IndexedProblem.objects.filter(problem_id__in=stale).delete()[0]
    seeds = [p for p in chosen if p.kind == ProblemKind.SEED]
    for start in range(0, len(seeds), BATCH):
        _index_batch(seeds[start : start + BATCH], report)
    index.touched()
    return report


def _index_batch(batch: list[Problem], report: IndexReport) -> None:
    stored = {
        row.problem_id: row
        for row in IndexedProblem.objects.filter(problem_id__in=[p.pk for p in batch]).only(
            "id", "problem_id", "digest"
        )
    }
    changed = []
    for p in batch:
        row = stored.get(p.pk)
        if row is not None and row.digest == _digest(p, published_on(p)):
            report.unchanged += 1
        else:
            changed.append(p)
    if not changed:
        return
    replaced = [stored[p.pk].pk for p in changed if p.pk in stored]
    if replaced:
        IndexedProblem.objects.filter(pk__in=replaced).delete()
    report.updated += len(replaced)
    report.added += len(changed) - len(replaced)
    IndexedProblem.objects.bulk_create(_rows(changed))


def rebuild(*, progress: Callable[[int, int], None] | None = None) -> IndexReport:
    """Index every seed problem (unchanged ones are kept), drop rows of problems that are no
    longer seeds. ``progress(done, total)`` after each batch."""
    seeds = Problem.objects.filter(kind=ProblemKind.SEED).order_by("id")
    total = seeds.count()
    report = IndexReport()
    report.removed = IndexedProblem.objects.exclude(problem__kind=ProblemKind.SEED).delete()[0]
    done = 0
    fields = ("id", "kind", "statement", "reference_solution", "origin_dataset", "origin_id")
    ids = list(seeds.values_list("id", flat=True))
    for start in range(0, len(ids), BATCH):
        chunk = list(
            Problem.objects.filter(id__in=ids[start : start + BATCH]).only(
                *fields, "contest_date", "metadata"
            )
        )
        with transaction.atomic():
            _index_batch(chunk, report)
        done += len(chunk)
        if progress is not None:
            progress(done, total)
    index.touched()
    return report


def index_summary() -> dict:
    """What the index holds now: {"version", "problems", "corpora", "method"}."""
    matrix, state = index.current()
    return _summary(matrix, state)


def _summary(matrix: index.Matrix, state: index.IndexState) -> dict:
    return {
        "version": state.version,
        "problems": len(matrix),
        "corpora": matrix.corpora(),
        "method": METHOD,
    }


# --- screening --------------------------------------------------------------------------------


def _ancestors(problem: Problem | None) -> list[Problem]:
    """``problem`` and its parents up to its lineage root."""
    chain, node, guard = [], problem, 0
    while node is not None and guard < 200:
        chain.append(node)
        node = node.parent
        guard += 1
    return chain


def _entry(hit: index.Hit, problems: dict[int, Problem]) -> dict:
    p = problems.get(hit.problem_id)
    return {
        "problem_id": hit.problem_id,
        "public_id": p.public_id if p else "",
        "title": p.title if p else "",
        "dataset": hit.dataset,
        "origin_id": hit.origin_id,
        "date": hit.published_on.isoformat() if hit.published_on else None,
        "statement": hit.statement,
        "code": hit.code,
        "similarity": hit.similarity,
    }


def screen_record(
    *, statement: str, code: str, lineage: Iterable[Problem] = (), self_id: int | None = None
) -> dict:
    """Screen a statement and a reference solution against the index (module docstring).
    ``lineage``: the problem's parent chain (its seed last); ``self_id``: the problem itself,
    never its own neighbour."""
    matrix, state = index.current()
    s_set, c_set = shingles.statement_shingles(statement), shingles.code_shingles(code)
    s_sig = signatures.signature(s_set) if s_set else None
    c_sig = signatures.signature(c_set) if c_set else None
    family = {p.pk: p for p in lineage if p.pk is not None}
    excluded = set(family) | ({self_id} if self_id else set())
    hits = index.nearest(
        matrix, s_sig, c_sig, exclude=excluded, top=NEAREST, floor=KEEP_FLOOR, most=KEEP_MOST
    )
    seed = list(family.values())[-1] if family else None
    copies = _seed_copies(matrix, seed, hits)
    own = _own_lineage(matrix, s_sig, c_sig, family)
    names = {
        p.pk: p
        for p in Problem.objects.filter(pk__in=[h.problem_id for h in hits + own]).only(
            "id", "public_id", "title"
        )
    }
    # A problem deleted since this process last counted the index is no neighbour.
    hits = [h for h in hits if h.problem_id in names]
    own = [h for h in own if h.problem_id in names]
    lineage_hits = [h for h in hits if h.problem_id in copies]
    kept = [h for h in hits if h.problem_id not in copies]
    lineage_entries = [
        {**_entry(h, names), "relation": _relation(h.problem_id, seed, family)} for h in own
    ] + [{**_entry(h, names), "relation": "copy of its seed"} for h in lineage_hits]
    neighbours = [_entry(h, names) for h in kept]
    return {
        "screened_at": timezone.now().isoformat(timespec="seconds"),
        "index": _summary(matrix, state),
        "statement_shingles": len(s_set),
        "code_shingles": len(c_set),
        "neighbours": neighbours,
        "lineage": lineage_entries,
        "max_similarity": max((n["similarity"] for n in neighbours), default=0.0),
    }


def _relation(problem_id: int, seed: Problem | None, family: dict[int, Problem]) -> str:
    if seed is not None and problem_id == seed.pk:
        return "its seed"
    return "its ancestor"


def _own_lineage(matrix, s_sig, c_sig, family: dict[int, Problem]) -> list[index.Hit]:
    """The indexed members of the problem's own lineage, with their similarity."""
    rows = index.rows_of(matrix, set(family))
    s, c = index.scores(matrix, s_sig, c_sig, rows)
    return [index.hit_at(matrix, int(i), float(s[j]), float(c[j])) for j, i in enumerate(rows)]


def _seed_copies(matrix, seed: Problem | None, hits: list[index.Hit]) -> set[int]:
    """The hits that are copies of ``seed`` in another corpus (or the same one twice)."""
    if seed is None or not hits:
        return set()
    seed_rows = index.rows_of(matrix, {seed.pk})
    if len(seed_rows):
        row = seed_rows[0]
        s_sig = matrix.statement[row] if matrix.has_statement[row] else None
        c_sig = matrix.code[row] if matrix.has_code[row] else None
    else:
        s_set = shingles.statement_shingles(seed.statement)
        c_set = shingles.code_shingles(seed.reference_solution)
        s_sig = signatures.signature(s_set) if s_set else None
        c_sig = signatures.signature(c_set) if c_set else None
    s, c = index.scores(matrix, s_sig, c_sig, np.array([h.row for h in hits]))
    return {h.problem_id for h, a, b in zip(hits, s, c, strict=True) if max(a, b) >= SEED_COPY}


def screen_problem(problem: Problem, *, context: str) -> ProblemScreen:
    """Screen ``problem`` (its lineage apart) and store the result as its latest screen."""
    record = screen_record(
        statement=problem.statement,
        code=problem.reference_solution,
        lineage=_ancestors(problem.parent),
        self_id=problem.pk,
    )
    return store(problem, record, context=context)


def store(problem: Problem, record: dict, *, context: str) -> ProblemScreen:
    screen, _ = ProblemScreen.objects.update_or_create(
        problem=problem,
        defaults={
            "record": record,
            "max_similarity": record["max_similarity"],
            "index_version": record["index"]["version"],
            "context": context,
            "screened_at": timezone.now(),
        },
    )
    return screen


def screen_candidate(*, statement: str, code: str, parent: Problem) -> dict:
    """A BenchEvolver candidate's screen before it is a problem: its lineage is its parent's."""
    return screen_record(statement=statement, code=code, lineage=_ancestors(parent))


def screens_for(problems: Iterable[Problem], *, context: str = "gate") -> dict[int, dict]:
    """Each problem's screen against the index as it is now: its stored one, or a new one where
    it has none or the index changed since (stored too)."""
    problems = list(problems)
    if not problems:
        return {}
    _, state = index.current()
    stored = {
        s.problem_id: s
        for s in ProblemScreen.objects.filter(problem_id__in=[p.pk for p in problems])
    }
    out = {}
    for p in problems:
        screen = stored.get(p.pk)
        if screen is None or screen.index_version != state.version:
            screen = screen_problem(p, context=context)
        out[p.pk] = screen.record
    return out


def latest_screen(problem: Problem) -> ProblemScreen | None:
    return ProblemScreen.objects.filter(problem=problem).first()


def ledger_entry(record: dict) -> dict:
    """The validation-ledger entry of a BenchEvolver candidate's screen."""
    return {
        "step": "contamination screen",
        "outcome": nearest_text(record),
        "reason": "recorded, not decided: the release gate's similarity rule decides",
        "index": corpora_text(record.get("index") or {}),
        "max_similarity": record.get("max_similarity"),
        "nearest": (record.get("neighbours") or [])[:NEAREST],
        "lineage": record.get("lineage") or [],
    }
