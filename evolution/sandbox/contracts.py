"""Output contracts: how an evolved task's answers are checked, declared by the statement writer.

A contract is what the writer states in its answer (``output_contract``); it becomes the
``comparison`` dict the judge already understands (``compare.validate_comparison``), so the
same rule judges the reference's outputs, the validation votes, the panel and, once the task
is accepted (``Problem.comparison``), the leaderboard.

=============  ================================================================================
contract       the judge compares
=============  ================================================================================
``exact``      LiveCodeBench's ``grade_stdio`` (lines stripped; numbers equal as decimals)
``tokens``     the whitespace-separated tokens in order, whatever the line breaks
``float``      tokens that parse as numbers within ``tolerance`` (relative and absolute)
``unordered``  the multiset of tokens (any order of a set of answers)
``checker``    a program the writer wrote reads ``{"input", "expected", "actual"}`` on stdin
               and prints ``AC`` or ``WA`` (for tasks with several right answers)
=============  ================================================================================

``tokens`` has no comparator of its own in the judge: it is carried out by a fixed checker
program (``TOKENS_CHECKER``), so the judge needs no change for it.
"""

from __future__ import annotations

CONTRACTS = ("exact", "tokens", "float", "unordered", "checker")
DEFAULT_TOLERANCE = 1e-6
MAX_TOLERANCE = 1e-2

TOKENS_CHECKER = """import json, sys
doc = json.load(sys.stdin)
got, want = doc["actual"].split(), doc["expected"].split()
if got == want:
    print("AC")
else:
    first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    print("WA token", first + 1, "differs:", repr(got[first:first + 1]), "!=", repr(want[first:first + 1]))
"""


class ContractError(ValueError):
    """The declared contract is unusable; the message names what is wrong."""


def parse_contract(value) -> dict:
    """The writer's ``output_contract`` (a name, or an object with ``kind`` and, for ``float``,
    ``tolerance``, for ``checker``, ``checker``) as a normalised contract dict. Missing: exact."""
    if value is None or value == "":
        return {"kind": "exact"}
    if isinstance(value, str):
        value = {"kind": value}
    if not isinstance(value, dict):
        raise ContractError("output_contract must be a name or an object with 'kind'")
    kind = str(value.get("kind", "exact")).strip().lower()
    if kind not in CONTRACTS:
        raise ContractError(
            f"output_contract kind must be one of {', '.join(CONTRACTS)}, got {kind!r}"
        )
    contract: dict = {"kind": kind}
    if kind == "float":
        tolerance = value.get("tolerance", DEFAULT_TOLERANCE)
        if isinstance(tolerance, bool) or not isinstance(tolerance, int | float):
            raise ContractError("output_contract tolerance must be a number")
        if not 0 < tolerance <= MAX_TOLERANCE:
            # A loose tolerance would accept wrong answers as right: bounded on purpose.
            raise ContractError(f"output_contract tolerance must be in (0, {MAX_TOLERANCE}]")
        contract["tolerance"] = float(tolerance)
    if kind == "checker":
        checker = value.get("checker")
        if not isinstance(checker, str) or not checker.strip():
            raise ContractError("a checker contract needs 'checker': the checker's Python source")
        contract["checker"] = checker.strip() + "\n"
    return contract


def comparison_for(contract: dict | None) -> dict:
    """The judge's ``comparison`` dict for a contract ({} is LiveCodeBench's exact rule)."""
    kind = (contract or {}).get("kind", "exact")
    if kind == "exact":
        return {}
    if kind == "float":
        tol = contract.get("tolerance", DEFAULT_TOLERANCE)
        return {"mode": "float", "rel_tol": tol, "abs_tol": tol}
    if kind == "unordered":
        return {"mode": "unordered"}
    if kind == "tokens":
        return {"checker": TOKENS_CHECKER}
    if kind == "checker":
        return {"checker": contract["checker"]}
    raise ContractError(f"unknown contract {kind!r}")


def describe(contract: dict | None) -> str:
    kind = (contract or {}).get("kind", "exact")
    if kind == "float":
        return f"float (tolerance {contract.get('tolerance', DEFAULT_TOLERANCE):g})"
    if kind == "checker":
        return "checker program"
    return kind


def same_output(expected: str, actual: str, contract: dict | None, *, harness: str = "stdio"):
    """Whether ``actual`` is right given ``expected`` (the reference's output) under a contract
    that needs no program (exact, tokens, float, unordered); None for a checker contract, which
    must run sandboxed (``checker_verdicts``)."""
    from .compare import compare_function, compare_stdio

    kind = (contract or {}).get("kind", "exact")
    if kind == "checker":
        return None
    if kind == "tokens":
        return actual.split() == expected.split()
    comparison = comparison_for(contract)
    options = {
        "mode": comparison.get("mode", "exact"),
        "rel_tol": comparison.get("rel_tol", DEFAULT_TOLERANCE),
        "abs_tol": comparison.get("abs_tol", DEFAULT_TOLERANCE),
    }
    if harness == "function":
        try:
            return compare_function(actual, expected, **options)[0]
        except ValueError:
            return False
    return compare_stdio(actual, expected, **options)[0]


def checker_verdicts(checker: str, documents: list[dict], *, limits) -> list[str]:
    """Run a checker program, sandboxed, on ``{"input", "expected", "actual"}`` documents:
    "AC", "WA", or "broken" (it crashed or printed neither: the checker's fault)."""
    import json

    from .service import run_batch
    from .types import Limits

    if not documents:
        return []
    outcomes = run_batch(
        checker,
        [json.dumps(doc) for doc in documents],
        harness="stdio",
        limits=Limits(
            time_s=max(limits.time_s, 10.0),
            memory_mb=max(limits.memory_mb, 256),
            max_output_bytes=limits.max_output_bytes,
        ),
    )
    verdicts = []
    for outcome in outcomes:
        if outcome.status == "SE":
            raise RuntimeError(f"sandbox failure while running a checker: {outcome.stderr[-300:]}")
        words = outcome.stdout.strip().split(None, 1)
        head = words[0].upper() if words else ""
        verdicts.append(head if outcome.status == "OK" and head in ("AC", "WA") else "broken")
    return verdicts
