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
