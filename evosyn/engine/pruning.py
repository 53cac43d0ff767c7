"""Which synthesized instances are kept (seed 001, sections 3.2 and 4.3).

- Identical-solution pruning: the M sampled solutions are all the same program (after
  normalising layout and comments), so the matrix cannot tell anything apart.
- Zero-Variance Pruning: the testings yield no ranking variation (every testing accepts
  exactly the same solutions, or the strategy scored every testing alike): unreliable testings
  or a trivial problem, discarded either way. Identical solutions are the extreme case (the
  document's A.4: M solutions sampled at temperature 1.0 that are the same program); both are
  what D^relaxed keeps.
- Unsolvable: the strategy's top solution passes none of the testings.

A testing is one unit-test list (matrix columns are testings).
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass, field


def normalized(code: str) -> str:
    """The program without comments, docstrings or layout (the AST dump), else stripped text."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return "\n".join(line.rstrip() for line in code.strip().splitlines())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, annotate_fields=False)


def code_sha(code: str) -> str:
    return hashlib.sha256(normalized(code).encode()).hexdigest()[:24]


def identical_solutions_reason(codes: list[str]) -> str:
    """A reason when every solution is the same program, else ""."""
    if len(codes) < 2:
        return ""
    if len({code_sha(c) for c in codes}) == 1:
        return f"identical solutions: all {len(codes)} sampled solutions are the same program"
    return ""


def zero_variance_reason(matrix: list[list[int]], test_scores: list[float] | None) -> str:
    """A reason when the testings cannot be ranked, else ""."""
    if not matrix or not matrix[0]:
        return "zero variance: no matrix"
    n = len(matrix[0])
    columns = {tuple(row[j] for row in matrix) for j in range(n)}
    if len(columns) == 1:
        (column,) = columns
        passed = sum(column)
        return (
            f"zero variance: all {n} testings accept the same {passed} of {len(matrix)} solutions"
        )
    if test_scores is not None and len(set(test_scores)) == 1:
        return f"zero variance: the strategy scored all {n} testings alike ({test_scores[0]:g})"
    return ""


@dataclass(frozen=True)
class Decision:
    """What the filter does with a ranked instance: kept, or pruned with its reason. ``top`` is
    the strategy's strongest solution and ``selected`` the testings (columns) it keeps, the
    top-ranked ones the strongest solution passes (also for an instance only Zero-Variance
    Pruning drops: that is D^relaxed)."""

    kept: bool
    reason: str
    top: int
    selected: list[int] = field(default_factory=list)

    @property
    def cause(self) -> str:
        """The reason's kind ("identical solutions", "zero variance", "unsolvable"), or ""."""
        return self.reason.split(":", 1)[0] if self.reason else ""


def decide(
    matrix: list[list[int]],
    codes: list[str],
    *,
    solutions: list[int],
    tests: list[int],
    test_scores: list[float] | None,
    selected_tests: int,
) -> Decision:
    """The filter's rule (sections 3.2, 4.3) on one instance the strategy ranked (``solutions``
    and ``tests``: row and column indexes, best first): identical solutions and zero variance
    prune first (Zero-Variance Pruning), then a top solution passing no testing (unsolvable);
    else the instance is kept with the top-ranked testings its top solution passes."""
    top = solutions[0]
    selected = [j for j in tests if matrix[top][j]][:selected_tests]
    reason = identical_solutions_reason(codes) or zero_variance_reason(matrix, test_scores)
    if not reason and not selected:
        reason = "unsolvable: the top-ranked solution passes none of the testings"
    return Decision(kept=not reason, reason=reason, top=top, selected=selected)
