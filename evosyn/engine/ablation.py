"""The document's ablations over one campaign's stored pass matrices (seed 001, section 4.2).

- Ablation 1 (Figure 4b): the same problems with M solutions and N testings, M = N = 4, 8, 16:
  how many usable (kept) instances the best strategy leaves, at O(M N) executions.
- Ablation 2 (Table 1): the same strategy on M = 16 solutions, Criterion-2 checked on the top-K
  and bottom-K solutions, K = 1, 2, 4, 8, with and without Criterion-1: the consistency score
  (the share of seed instances satisfied) and the executions the check costs (#Exec = 4K).

Both are computed here from an M x N matrix a campaign stored, without a model call: a campaign
at M' <= M and N' <= N would have sampled the first M' solutions and written the first N'
testings of the same answers (solutions and testings are indexed by their call), so the
sub-matrix of solutions with index < M' and of the first N' testings is what it would have
executed. A cell beyond the stored M or N is left out, saying why (it needs new model calls).
Plain data in, plain data out; the strategy runs are the caller's.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import strategy as S

# The document's grids: M = N in {4, 8, 16} (Figure 4b), K in {1, 2, 4, 8} (Table 1).
DOCUMENT_MN = (4, 8, 16)
DOCUMENT_K = (1, 2, 4, 8)


def parse_values(text: str, name: str, *, low: int) -> list[int]:
    """ "4,8,16" as [4, 8, 16] (sorted, each once). ValueError naming ``name`` when a value is
    not an integer or below ``low``, or when there is none."""
    values = set()
    for word in str(text).replace(" ", "").split(","):
        if not word:
            continue
        try:
            value = int(word)
        except ValueError:
            raise ValueError(f"{name}: {word!r} is not an integer") from None
        if value < low:
            raise ValueError(f"{name}: {value} is below {low}")
        values.add(value)
    if not values:
        raise ValueError(f"{name}: give at least one value, e.g. 4,8,16")
    return sorted(values)


def sub_matrix(matrix: dict, *, m: int, n: int) -> tuple[list[int], list[int]]:
    """(row positions, column positions) of the stored ``matrix`` a campaign at M = m, N = n
    would have executed: the rows of the solutions with index < m (a solution without code has
    no row, as in the campaign) and the first n testings."""
    rows = [p for p, index in enumerate(matrix["solutions"]) if index < m]
    return rows, list(range(min(n, len(matrix["tests"]))))


def take(rows: list[list[int]], row_positions: list[int], columns: list[int]) -> list[list[int]]:
    return [[rows[r][c] for c in columns] for r in row_positions]


def usable(row_positions: list[int], columns: list[int]) -> bool:
    """What the execute stage asks before ranking: two solutions with code and one testing."""
    return len(row_positions) >= 2 and bool(columns)


def unavailable(*, m: int, n: int, k: int, stored_m: int, stored_n: int) -> str:
    """Why the cell (M, N, K) cannot be computed from a stored ``stored_m`` x ``stored_n``
    matrix, or ""."""
    if m > stored_m:
        return f"the campaign stored M = {stored_m} solutions: M = {m} needs new model calls"
    if n > stored_n:
        return f"the campaign stored N = {stored_n} testings: N = {n} needs new model calls"
    if 2 * k > m:
        return f"K = {k} > M / 2: the top-K and bottom-K of {m} solutions overlap"
    return ""


@dataclass
class Consistency:
    """Table 1's columns for one (M, N, K) over the seed instances."""

    seeds: int
    score: float  # Criterion-1 and Criterion-2 (the document's setting, "Ours")
    score_without_c1: float  # Criterion-2 alone (Table 1's "Criterion-1: No" rows)
    criterion1: float
    executions: int  # #Exec summed over the seeds: 4K each

    def to_dict(self) -> dict:
        return {
            "seeds": self.seeds,
            "score": self.score,
            "score_without_c1": self.score_without_c1,
            "criterion1": self.criterion1,
            "executions": self.executions,
        }


def consistency(checks: list[S.InstanceCheck], k: int) -> Consistency:
    """The consistency scores of one cell: a strategy failure on a seed counts unsatisfied."""
    n = len(checks)
    if not n:
        return Consistency(0, 0.0, 0.0, 0.0, 0)
    return Consistency(
        seeds=n,
        score=sum(c.satisfied for c in checks) / n,
        score_without_c1=sum(c.criterion2 for c in checks) / n,
        criterion1=sum(c.criterion1 for c in checks) / n,
        executions=S.executions_per_instance(k) * n,
    )
