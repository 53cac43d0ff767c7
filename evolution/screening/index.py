"""The index as one process holds it: every stored signature in memory, refreshed from the
database when it changed, and a query that compares a signature with every row.

A query reads every row twice over, cheaply then exactly. First the low byte of each of the
128 hash values (b-bit MinHash with b = 8), stored column by column, is compared with the
query's: 128 vectorised equalities over one byte per row and field, a few milliseconds at
50,000 rows. A byte agrees by chance one time in 256, so that count only over-estimates; the
``PREFILTER`` rows it ranks highest are then scored exactly on their full 32-bit signatures,
which is the estimate every screen reports.

Why a scan and not datasketch's ``MinHashLSH``: an LSH index answers "which rows collide at
its threshold", so the nearest public problems below it (what a curator reads for a new
problem, and what a rule at another threshold needs) are not found; and built in memory from
the stored signatures of 50,000 problems it took 52 s and 551 MB for one of the two fields
(datasketch 2.0.0, threshold 0.4: 32 bands of 4 rows), in every web and worker process
(bench/bench_screening.py measures it at 10,000). The scan holds 5 bytes per hash value and row
(64 MB at 50,000 problems, both fields) and gives every row's estimate.

An import adds rows (a changed problem's row is deleted and written again, so its id grows): a
query reads the newest stored row and loads only the rows past the newest one it holds; every
``VERIFY_SECONDS`` it also counts the stored rows and reloads everything when they do not match
(rows deleted, a rolled-back transaction, a truncated table). docs/screening.md.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import date

import numpy as np
from django.db.models import Count, Max

from . import signatures
from .models import IndexedProblem

_EPOCH = date(1970, 1, 1)
UNDATED = np.iinfo(np.int32).min
PERM = signatures.NUM_PERM
# Rows the byte scan hands to the exact estimate.
PREFILTER = 256
_EMPTY = np.iinfo(np.uint32).max  # datasketch's value for a position no shingle reached


def _day(value: date | None) -> int:
    return UNDATED if value is None else (value - _EPOCH).days


def day_to_date(day: int) -> date | None:
    return None if day == UNDATED else date.fromordinal(_EPOCH.toordinal() + int(day))


@dataclass(frozen=True)
class IndexState:
    rows: int
    last_id: int

    @property
    def version(self) -> str:
        """Changes with every import that changed the index (rows are never updated in place:
        a changed problem's row is written anew, with a larger id)."""
        return f"{self.rows}:{self.last_id}"


def stored_state() -> IndexState:
    agg = IndexedProblem.objects.aggregate(rows=Count("id"), last_id=Max("id"))
    return IndexState(rows=agg["rows"] or 0, last_id=agg["last_id"] or 0)


def _empty_signatures(rows: int = 0) -> np.ndarray:
    return np.zeros((rows, PERM), dtype=signatures.DTYPE)


@dataclass
class Matrix:
    """Row i: ``row_ids[i]`` (IndexedProblem), ``problem_ids[i]``, its signatures (``statement``,
    ``code``: rows x 128 uint32; ``has_*`` false when that side had no shingles), their low
    bytes column by column (``statement8``, ``code8``: 128 x rows), its day of publication."""

    row_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    problem_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    statement: np.ndarray = field(default_factory=_empty_signatures)
    code: np.ndarray = field(default_factory=_empty_signatures)
    statement8: np.ndarray = field(default_factory=lambda: np.zeros((PERM, 0), dtype=np.uint8))
    code8: np.ndarray = field(default_factory=lambda: np.zeros((PERM, 0), dtype=np.uint8))
    has_statement: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    has_code: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    days: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    datasets: list[str] = field(default_factory=list)
    origin_ids: list[str] = field(default_factory=list)
    # (id, indexed_at) of the newest stored row when this matrix was read: it holds every row
    # up to that id.
    newest: tuple[int, str] = (0, "")
    _corpora: dict | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.row_ids)

    def state(self) -> IndexState:
        return IndexState(rows=len(self), last_id=int(self.row_ids.max()) if len(self) else 0)

    @property
    def nbytes(self) -> int:
        return sum(
            a.nbytes for a in (self.statement, self.code, self.statement8, self.code8, self.days)
        )

    def corpora(self) -> dict[str, dict]:
        """{dataset: {"problems", "dated", "first", "last"}} in dataset order (computed once)."""
        if self._corpora is None:
            self._corpora = self._count_corpora()
        return self._corpora

    def _count_corpora(self) -> dict[str, dict]:
        out: dict[str, dict] = {}
        names = np.array(self.datasets, dtype=object)
        for name in sorted(set(self.datasets)):
            days = self.days[names == name]
            dated = days[days != UNDATED]
            out[name] = {
                "problems": int(len(days)),
                "dated": int(len(dated)),
                "first": day_to_date(int(dated.min())).isoformat() if len(dated) else None,
                "last": day_to_date(int(dated.max())).isoformat() if len(dated) else None,
            }
        return out

    def merged(self, rows: list[tuple]) -> Matrix:
        """This matrix with ``rows`` (``_FIELDS`` tuples) added, each replacing the row of its
        problem if any."""
        if not rows:
            return self
        (ids, problems, datasets, origins, days, stmt, code, s_count, c_count) = zip(
            *rows, strict=True
        )
        new_problems = np.array(problems, dtype=np.int64)
        replaced = np.isin(self.problem_ids, new_problems)
        # Rows of problems indexed again are dropped (copies); new problems only append.
        old = self if not replaced.any() else self._without(~replaced)
        stmt_sig = _signatures(stmt)
        code_sig = _signatures(code)
        return Matrix(
            row_ids=np.concatenate([old.row_ids, np.array(ids, dtype=np.int64)]),
            problem_ids=np.concatenate([old.problem_ids, new_problems]),
            statement=np.concatenate([old.statement, stmt_sig]),
            code=np.concatenate([old.code, code_sig]),
            statement8=np.concatenate([old.statement8, _low_bytes(stmt_sig)], axis=1),
            code8=np.concatenate([old.code8, _low_bytes(code_sig)], axis=1),
            has_statement=np.concatenate(
                [old.has_statement, np.array(s_count, dtype=np.int64) > 0]
            ),
            has_code=np.concatenate([old.has_code, np.array(c_count, dtype=np.int64) > 0]),
            days=np.concatenate([old.days, np.array([_day(d) for d in days], dtype=np.int32)]),
            datasets=old.datasets + list(datasets),
            origin_ids=old.origin_ids + list(origins),
            newest=old.newest,
        )

    def _without(self, keep: np.ndarray) -> Matrix:
        return Matrix(
            row_ids=self.row_ids[keep],
            problem_ids=self.problem_ids[keep],
            statement=self.statement[keep],
            code=self.code[keep],
            statement8=self.statement8[:, keep],
            code8=self.code8[:, keep],
            has_statement=self.has_statement[keep],
            has_code=self.has_code[keep],
            days=self.days[keep],
            datasets=[d for d, k in zip(self.datasets, keep, strict=True) if k],
            origin_ids=[o for o, k in zip(self.origin_ids, keep, strict=True) if k],
            newest=self.newest,
        )


def _signatures(stored: tuple) -> np.ndarray:
    """Stored signature bytes (None: no shingles) as a rows x 128 uint32 matrix."""
    empty = np.full(PERM, _EMPTY, dtype=signatures.DTYPE).tobytes()
    data = b"".join(bytes(s) if s is not None else empty for s in stored)
    return np.frombuffer(data, dtype=signatures.DTYPE).reshape(len(stored), PERM)


def _low_bytes(sigs: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray((sigs & 0xFF).astype(np.uint8).T)


_FIELDS = (
    "id",
    "problem_id",
    "origin_dataset",
    "origin_id",
    "published_on",
    "statement_signature",
    "code_signature",
    "statement_shingles",
    "code_shingles",
)
_LOCK = threading.Lock()
_CACHE: dict = {}
# How often a process counts the stored index to catch what its newest row does not show.
VERIFY_SECONDS = 2.0


def _load(*, after_id: int = 0, upto_id: int) -> list[tuple]:
    rows = IndexedProblem.objects.filter(id__gt=after_id, id__lte=upto_id)
    return list(rows.order_by("id").values_list(*_FIELDS))


def _newest() -> tuple[int, str]:
    """(id, indexed_at) of the newest stored row: one step down the primary key's index."""
    row = IndexedProblem.objects.order_by("-id").values_list("id", "indexed_at").first()
    return (row[0], row[1].isoformat()) if row else (0, "")


def _unchanged(matrix: Matrix) -> bool:
    """Whether the newest row this process holds is still stored as it was."""
    if not len(matrix):
        return True
    last = matrix.newest
    stored = IndexedProblem.objects.filter(id=last[0]).values_list("indexed_at", flat=True).first()
    return stored is not None and stored.isoformat() == last[1]


def current() -> tuple[Matrix, IndexState]:
    """This process's matrix, brought up to the stored index, and its state.

    Each call reads the newest stored row (one index step): the rows past the newest one held
    are loaded and added. Every ``VERIFY_SECONDS`` (and after this process wrote to the index)
    the stored rows are counted too, and anything that does not account for (rows deleted, a
    transaction that committed an older id late, a truncated table) reloads the index."""
    newest = _newest()
    with _LOCK:
        matrix = _CACHE.get("matrix") or Matrix()
        if matrix.newest != newest:
            matrix = _read(matrix, newest)
        if time.monotonic() - _CACHE.get("verified", float("-inf")) >= VERIFY_SECONDS:
            if matrix.state() != stored_state():
                matrix = _read(Matrix(), _newest())
            _CACHE["verified"] = time.monotonic()
        _CACHE["matrix"] = matrix
    return matrix, matrix.state()


def _read(matrix: Matrix, newest: tuple[int, str]) -> Matrix:
    """``matrix`` grown to the stored rows up to ``newest``, or read anew."""
    if newest[0] > matrix.newest[0] and _unchanged(matrix):
        grown = matrix.merged(_load(after_id=matrix.newest[0], upto_id=newest[0]))
    else:
        grown = Matrix().merged(_load(upto_id=newest[0]))
    grown.newest = newest
    return grown


def touched() -> None:
    """This process wrote to the index: the next query counts the stored state again."""
    with _LOCK:
        _CACHE.pop("verified", None)


def forget() -> None:
    """Drop this process's matrix (the next query loads the stored index again)."""
    with _LOCK:
        _CACHE.pop("matrix", None)
        _CACHE.pop("verified", None)


@dataclass(frozen=True)
class Hit:
    row: int
    problem_id: int
    dataset: str
    origin_id: str
    published_on: date | None
    statement: float
    code: float

    @property
    def similarity(self) -> float:
        return max(self.statement, self.code)


def _byte_counts(matrix: Matrix, query: np.ndarray | None, which: str) -> np.ndarray:
    """Per row, how many of the 128 low bytes agree with the query's (0 where the row or the
    query has nothing on that side)."""
    n = len(matrix)
    counts = np.zeros(n, dtype=np.uint8)
    if query is None or not n:
        return counts
    columns = matrix.statement8 if which == "statement" else matrix.code8
    low = (query & 0xFF).astype(np.uint8)
    same = np.empty(n, dtype=bool)
    for k in range(PERM):
        np.equal(columns[k], low[k], out=same)
        np.add(counts, same.view(np.uint8), out=counts)
    has = matrix.has_statement if which == "statement" else matrix.has_code
    counts[~has] = 0
    return counts


def scores(
    matrix: Matrix, statement: np.ndarray | None, code: np.ndarray | None, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The (statement, code) similarity estimates of ``rows`` from their full signatures; 0
    where either side has nothing."""
    out = []
    for query, sigs, has in (
        (statement, matrix.statement, matrix.has_statement),
        (code, matrix.code, matrix.has_code),
    ):
        if query is None or not len(rows):
            out.append(np.zeros(len(rows), dtype=np.float64))
            continue
        agree = np.count_nonzero(sigs[rows] == query, axis=1) / PERM
        out.append(np.where(has[rows], agree, 0.0))
    return out[0], out[1]


def nearest(
    matrix: Matrix,
    statement: np.ndarray | None,
    code: np.ndarray | None,
    *,
    exclude: set[int] = frozenset(),
    top: int,
    floor: float,
    most: int,
) -> list[Hit]:
    """The ``top`` rows most similar to the query and every other row at ``floor`` or above,
    at most ``most`` in all, most similar first; rows of the problems in ``exclude`` apart."""
    if not len(matrix):
        return []
    rough = np.maximum(
        _byte_counts(matrix, statement, "statement"), _byte_counts(matrix, code, "code")
    )
    candidates = np.arange(len(matrix))
    if exclude:
        candidates = candidates[~np.isin(matrix.problem_ids, list(exclude))]
    if len(candidates) > PREFILTER:
        best = np.argpartition(-rough[candidates].astype(np.int16), PREFILTER - 1)[:PREFILTER]
        candidates = candidates[best]
    s, c = scores(matrix, statement, code, candidates)
    sim = np.maximum(s, c)
    order = np.lexsort((matrix.problem_ids[candidates], -sim))
    hits = []
    for rank, j in enumerate(order[:most]):
        if rank >= top and sim[j] < floor:
            break
        hits.append(hit_at(matrix, int(candidates[j]), float(s[j]), float(c[j])))
    return hits


def hit_at(matrix: Matrix, i: int, statement: float, code: float) -> Hit:
    return Hit(
        row=i,
        problem_id=int(matrix.problem_ids[i]),
        dataset=matrix.datasets[i],
        origin_id=matrix.origin_ids[i],
        published_on=day_to_date(int(matrix.days[i])),
        statement=round(statement, 4),
        code=round(code, 4),
    )


def rows_of(matrix: Matrix, problem_ids: set[int]) -> np.ndarray:
    """The rows of those of ``problem_ids`` that are in the index."""
    return np.flatnonzero(np.isin(matrix.problem_ids, list(problem_ids)))
