"""Filtering strategies as programs, and the consistency evaluator (seed 001, section 3.1).

A strategy is a Python program run in the sandbox (harness "stdio"). It reads one matrix
document as JSON on stdin::

    {"solution_id_list": ["s0", ...], "testing_id_list": ["t0", ...],
     "solution_pass_testing": {"s0": ["t1", ...]}, "testing_accept_solutions": {"t0": ["s0"]},
     "matrix": [[1, 0, ...], ...]}          # matrix[i][j]: solution i passes testing j

A testing is one unit-test list (one test-writer answer); passing it means passing every unit
test in it. The human testing of a seed is the seed's own test suite.

and prints one JSON object: ``{"testings": [every test id, best first], "solutions": [every
solution id, best first] (optional), "testing_scores": {id: number} (optional)}``. Anything
else (a crash, a time-out, output that is not such an object) is a failure, recorded.

Pure functions over plain data: the sandbox is passed in by the caller.
"""

from __future__ import annotations

import ast
import json
from dataclasses import asdict, dataclass, field

# The document's initial strategy: (1) solutions that pass more testings are better; (2)
# testings that validate more solutions are better. Deliberately imperfect (a testing that
# passes every solution ranks first); the search is there to correct it.
INITIAL_STRATEGY = """import json
import sys

data = json.load(sys.stdin)
solution_id_list = data["solution_id_list"]
testing_id_list = data["testing_id_list"]
solution_pass_testing = data["solution_pass_testing"]
testing_accept_solutions = data["testing_accept_solutions"]

# (1) solutions that pass more testings are considered better
solution_weights = {s: len(solution_pass_testing[s]) for s in solution_id_list}
# (2) testings that validate more solutions are considered better
testing_weights = {t: len(testing_accept_solutions[t]) for t in testing_id_list}

sorted_solutions = sorted(solution_id_list, key=lambda s: solution_weights[s], reverse=True)
sorted_testings = sorted(testing_id_list, key=lambda t: testing_weights[t], reverse=True)
print(json.dumps({
    "solutions": sorted_solutions,
    "testings": sorted_testings,
    "testing_scores": testing_weights,
}))
"""


# The document prints its strategies as fragments (Figure 3, Appendix A.3's Figures 10-14):
# top-level code over its names (``solution_id_list``, ``testing_accept_solutions``, ...) that
# reads nothing and prints nothing, and ends with the ranking in a name of its own
# (``sorted_testings``, ``testing_quality``, ``testing_weights`` plus ``testing_penalties``,
# ``best_solutions``, ...). ``program_of`` runs such a fragment as written between the two
# parts below: the first binds the document's names from the matrix on stdin (and the two
# maps Figures 10, 11 and 13 fill without creating), the second prints the ranking those names
# hold. A complete program (one that reads or prints) is left as it is.
FRAGMENT_HEAD = """# A strategy fragment as the document prints them (Figure 3, Appendix A.3), run by
# BenchForge's wrapper: the matrix's names are bound from stdin, the fragment runs as written,
# and the ranking it leaves in its names is printed (evosyn/engine/strategy.py, program_of).
import json
import sys

data = json.load(sys.stdin)
solution_id_list = data["solution_id_list"]
testing_id_list = data["testing_id_list"]
solution_pass_testing = data["solution_pass_testing"]
testing_accept_solutions = data["testing_accept_solutions"]
matrix = data["matrix"]
solution_weights = {}
testing_weights = {}

# --- the fragment, as written ---
"""
FRAGMENT_TAIL = """
# --- end of the fragment ---


def _ranking_of_fragment(names):
    def first_map(*keys):
        for key in keys:
            value = names.get(key)
            if isinstance(value, dict) and value:
                return value
        return None

    testing_scores = first_map("testing_quality", "testing_weights")
    penalties = names.get("testing_penalties")
    if testing_scores is not None and isinstance(penalties, dict):
        testing_scores = {
            t: testing_scores.get(t, 0) + penalties.get(t, 0) for t in testing_id_list
        }
    testings = names.get("sorted_testings")
    if not isinstance(testings, list):
        if testing_scores is None:
            sys.exit(
                "the strategy fragment ranks no testing: it leaves none of sorted_testings, "
                "testing_quality, testing_weights"
            )
        testings = sorted(testing_id_list, key=lambda t: testing_scores.get(t, 0), reverse=True)
    out = {"testings": testings}
    solutions = names.get("sorted_solutions", names.get("best_solutions"))
    if not isinstance(solutions, list):
        solution_scores = first_map("solution_quality", "solution_weights")
        if solution_scores is not None:
            solutions = sorted(
                solution_id_list, key=lambda s: solution_scores.get(s, 0), reverse=True
            )
    if isinstance(solutions, list):
        out["solutions"] = solutions
    if testing_scores is not None:
        out["testing_scores"] = {t: testing_scores.get(t, 0) for t in testing_id_list}
    return out


print(json.dumps(_ranking_of_fragment(dict(globals()))))
"""


def is_fragment(code: str) -> bool:
    """Whether ``code`` is a fragment in the document's manner: valid Python that neither reads
    its input nor prints (no ``print``, ``input``, ``sys.stdin`` or ``sys.stdout``). Code that
    does not parse is not one (it is run as it is and fails as it will)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in ("print", "input"):
            return False
        if isinstance(node, ast.Attribute) and node.attr in ("stdin", "stdout", "buffer"):
            return False
    return bool(tree.body)


def program_of(code: str) -> str:
    """The program the sandbox runs for a strategy: ``code`` itself when it is a complete
    program, else the fragment wrapped so it reads the matrix and prints its ranking."""
    if not is_fragment(code):
        return code
    return FRAGMENT_HEAD + code.rstrip() + "\n" + FRAGMENT_TAIL


def solution_ids(m: int) -> list[str]:
    return [f"s{i}" for i in range(m)]


def test_ids(n: int) -> list[str]:
    return [f"t{j}" for j in range(n)]


def matrix_document(matrix: list[list[int]], n_tests: int) -> str:
    """The JSON a strategy reads, in the document's vocabulary (its figures run unchanged)."""
    sids, tids = solution_ids(len(matrix)), test_ids(n_tests)
    return json.dumps(
        {
            "solution_id_list": sids,
            "testing_id_list": tids,
            "solution_pass_testing": {
                s: [tids[j] for j in range(n_tests) if row[j]]
                for s, row in zip(sids, matrix, strict=True)
            },
            "testing_accept_solutions": {
                t: [sids[i] for i in range(len(matrix)) if matrix[i][j]] for j, t in enumerate(tids)
            },
            "matrix": matrix,
        }
    )


@dataclass
class Ranking:
    """A strategy's answer on one matrix, as indexes: best first."""

    tests: list[int]
    solutions: list[int]
    test_scores: list[float] | None = None
    solutions_from_strategy: bool = True


class StrategyFailure(Exception):
    """The strategy crashed, timed out or printed something that is not a ranking."""


def parse_ranking(stdout: str, *, m: int, n: int, matrix: list[list[int]]) -> Ranking:
    """Check a strategy's output. Solutions are optional: when absent, they rank by tests
    passed (the document's first principle). Raises StrategyFailure naming what is wrong."""
    try:
        data = json.loads(stdout.strip().splitlines()[-1] if stdout.strip() else "")
    except (ValueError, IndexError) as exc:
        raise StrategyFailure(f"output is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise StrategyFailure("output is not a JSON object")
    tests = _permutation(data.get("testings"), test_ids(n), "testings")
    from_strategy = data.get("solutions") is not None
    if from_strategy:
        solutions = _permutation(data.get("solutions"), solution_ids(m), "solutions")
    else:
        solutions = sorted(range(m), key=lambda i: -sum(matrix[i]))
    scores = None
    raw_scores = data.get("testing_scores")
    if isinstance(raw_scores, dict):
        try:
            scores = [float(raw_scores[t]) for t in test_ids(n)]
        except (KeyError, TypeError, ValueError):
            scores = None  # scores are advisory; a bad map only loses the zero-variance hint
    return Ranking(
        tests=tests, solutions=solutions, test_scores=scores, solutions_from_strategy=from_strategy
    )


def _permutation(value, ids: list[str], name: str) -> list[int]:
    if not isinstance(value, list):
        raise StrategyFailure(f"{name!r} must be a list of ids")
    if sorted(map(str, value)) != sorted(ids) or len(value) != len(ids):
        raise StrategyFailure(f"{name!r} must list every id exactly once ({len(ids)} ids)")
    position = {v: i for i, v in enumerate(ids)}
    return [position[str(v)] for v in value]


# --------------------------------------------------------------------------- evaluation


@dataclass
class InstanceCheck:
    """Criterion-1 and Criterion-2 on one human-verified seed instance."""

    instance: int
    criterion1: bool
    criterion2: bool
    top_solution: int | None = None
    bottom_solution: int | None = None
    top_test: int | None = None
    error: str = ""
    k: int = 1

    @property
    def satisfied(self) -> bool:
        return self.criterion1 and self.criterion2


def consistent_solutions(ranking: Ranking, k: int) -> list[int]:
    """The solutions Criterion-2 checks: the top-K then the bottom-K of the ranking (a solution
    in both is checked once)."""
    chosen = ranking.solutions[:k] + ranking.solutions[-k:]
    return list(dict.fromkeys(chosen))


def check_instance(
    instance: int, ranking: Ranking, *, matrix: list[list[int]], human: list[bool], k: int = 1
) -> InstanceCheck:
    """Criterion-1: the top-ranked solution passes the human testing. Criterion-2: each of the
    top-K and the bottom-K ranked solutions behaves on the human testing as on the strategy's
    top testing, suite against suite (``human[i]``: solution i passes the whole seed suite;
    ``matrix[i][t]``: it passes the whole unit-test list t). K = 1 is the document's setting
    (Table 1: with Criterion-1 it is stricter than K = 8 without it, at an eighth of the
    executions); ``consistency_k`` sets it."""
    if k < 1:
        raise ValueError(f"K must be at least 1, got {k}")
    top, bottom, t = ranking.solutions[0], ranking.solutions[-1], ranking.tests[0]
    c1 = bool(human[top])
    c2 = all(bool(human[i]) == bool(matrix[i][t]) for i in consistent_solutions(ranking, k))
    return InstanceCheck(
        instance, c1, c2, top_solution=top, bottom_solution=bottom, top_test=t, k=k
    )


def executions_per_instance(k: int) -> int:
    """Table 1's #Exec: the 2K checked solutions, each on the human testing and on the
    strategy's top testing (4 at K = 1, 32 at K = 8)."""
    return 4 * k


@dataclass
class Evaluation:
    score: float
    criterion1_rate: float
    criterion2_rate: float
    instances: int
    failures: int
    checks: list[dict] = field(default_factory=list)
    k: int = 1  # Criterion-2's K

    @property
    def status(self) -> str:
        if self.instances and self.failures == self.instances:
            return "failed"
        return "partial" if self.failures else "ok"

    def to_dict(self) -> dict:
        return {**asdict(self), "status": self.status}


def evaluate(checks: list[InstanceCheck]) -> Evaluation:
    """The strategy's score: the share of seed instances satisfying both criteria. A failed
    run on an instance counts as unsatisfied."""
    n = len(checks)
    if not n:
        return Evaluation(0.0, 0.0, 0.0, 0, 0)
    k = max(c.k for c in checks)
    return Evaluation(
        score=sum(c.satisfied for c in checks) / n,
        criterion1_rate=sum(c.criterion1 for c in checks) / n,
        criterion2_rate=sum(c.criterion2 for c in checks) / n,
        instances=n,
        failures=sum(1 for c in checks if c.error),
        checks=[{**asdict(c), "satisfied": c.satisfied} for c in checks],
        k=k,
    )


def run_strategy(
    code: str, matrices: list[list[list[int]]], n_tests: list[int], *, run_batch, limits
) -> list[Ranking | StrategyFailure]:
    """Run ``code`` once per matrix in one sandbox session (one fork per matrix). Every
    matrix gets a Ranking or the StrategyFailure that explains why not; never raises for the
    strategy's own faults."""
    if not matrices:
        return []
    documents = [matrix_document(m, n) for m, n in zip(matrices, n_tests, strict=True)]
    outcomes = run_batch(code, documents, harness="stdio", limits=limits)
    results: list[Ranking | StrategyFailure] = []
    for matrix, n, outcome in zip(matrices, n_tests, outcomes, strict=True):
        if outcome.status != "OK":
            detail = (outcome.stderr or "").strip()[-400:]
            results.append(StrategyFailure(f"{outcome.status}: {detail}".strip()))
            continue
        try:
            results.append(parse_ranking(outcome.stdout, m=len(matrix), n=n, matrix=matrix))
        except StrategyFailure as exc:
            results.append(exc)
    return results
