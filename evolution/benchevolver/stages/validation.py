"""What the validation stages share (``validate_witnesses``, ``validate_execute``, ``repair``,
``faithfulness_solve``, ``faithfulness_execute``, each in its own module; pure logic in
``engine/validate.py``), by the
lineage's Table 5 column: in the LiveCodeBench column the brute force and oracle vote on the
public examples and the brute force checks the hidden tests, both run through the task's own
harness (stdin or call-based); in the SciCode column statements are checked for faithfulness; a
disagreement asks for a repair."""

from __future__ import annotations

from evolution.benchevolver.engine import materialize, validate
from evolution.benchevolver.models import Candidate, Decision
from evolution.services import execution
from evolution.streams.errors import SandboxFailure

from .accept import decide_candidate
from .common import (
    Ctx,
    append_ledger,
    candidate_comparison,
)


def _judge_code(
    code: str,
    tests: list[tuple[str, str]],
    *,
    harness: str,
    entry_point: str,
    limits,
    comparison=None,
):
    result = execution.judge(
        code,
        tests,
        harness=harness,
        limits=limits,
        entry_point=entry_point,
        comparison=comparison or {},
        stop_on_first_failure=True,
    )
    if result.verdict == "SE":
        raise SandboxFailure(
            f"sandbox failure while judging: {result.compile_error or result.to_dict()}"
        )
    return result


def witness_harness(cand: Candidate) -> str:
    """The harness the witnesses run through: the task's, except that an assertion task's
    witnesses are called as the function harness calls them (arguments in, value out)."""
    return "function" if cand.harness == "assert" else cand.harness


def witness_pairs(tests: list[dict]) -> list[dict]:
    """Tests as (input, output) the witnesses see: an assertion program's call and value."""
    out = []
    for test in tests:
        given, expected = materialize.example_pair(test)
        out.append({**test, "input": given, "output": expected})
    return out


def request_repair_or_reject(
    ctx: Ctx, cand: Candidate, target: str, evidence: str, why: str
) -> None:
    s = ctx.settings
    if target == validate.STATEMENT and cand.spec_repairs >= s.spec_retry_attempts:
        exhausted = f"statement revisions exhausted ({cand.spec_repairs}/{s.spec_retry_attempts})"
    elif cand.repairs_used >= s.max_candidate_repairs:
        exhausted = f"repair budget exhausted ({cand.repairs_used}/{s.max_candidate_repairs})"
    else:
        exhausted = ""
    if exhausted:
        append_ledger(
            cand, {"step": "validate", "outcome": "invalid", "reason": f"{why}; {exhausted}"}
        )
        cand.save(update_fields=["validation_ledger"])
        decide_candidate(ctx, cand, Decision.INVALID, f"{why}; {exhausted}")
        return
    cand.generators = {
        **cand.generators,
        "pending_repair": {"target": target, "evidence": evidence, "why": why},
    }
    cand.save(update_fields=["generators", "validation_ledger"])


# The generated tiers, smallest first: how far up them the parent's reference holds says
# whether the new task needs a faster algorithm or a different answer.
TIER_ORDER = ("public", "small", "medium", "large", "stress")


def _parent_by_tier(ctx: Ctx, cand: Candidate, parent_code: str) -> list[dict]:
    """The parent's reference on the candidate's hidden tests, tier by tier (each tier stops at
    its first failure): [{"tier", "verdict", "passed", "total", "first_failing_test"}]."""
    hidden = [t for t in cand.tests if t["hidden"]] or list(cand.tests)
    tiers: dict[str, list[dict]] = {}
    for test in hidden:
        tiers.setdefault(test.get("tier") or "tests", []).append(test)
    order = sorted(tiers, key=lambda t: TIER_ORDER.index(t) if t in TIER_ORDER else len(TIER_ORDER))
    rows = []
    for tier in order:
        result = _judge_code(
            parent_code,
            [(t["input"], t["output"]) for t in tiers[tier]],
            harness=cand.harness,
            entry_point=cand.entry_point,
            limits=ctx.limits(),
            comparison=candidate_comparison(cand),
        )
        row = {
            "tier": tier,
            "verdict": result.verdict,
            "passed": result.passed,
            "total": len(tiers[tier]),
        }
        failing = next((i for i, t in enumerate(result.tests) if t.verdict != "AC"), None)
        if failing is not None:
            row["first_failing_test"] = failing + 1
        rows.append(row)
    return rows


def parent_outcome(rows: list[dict]) -> tuple[str, str]:
    """(verdict, outcome) of the parent check from its tiers: AC when every tier passes; too
    slow (TLE/MLE) when it fails only by time or memory, naming the tiers it still solves (an
    asymptotic lift); wrong otherwise, naming where it first goes wrong. A parent wrong from the
    first tier on solves a task whose answer changed: that alone does not show its approach is
    insufficient, which the judge decides (``lift``)."""
    failed = [r for r in rows if r["verdict"] != "AC"]
    if not failed:
        return "AC", "parent still solves every new test"
    held = [r["tier"] for r in rows if r["verdict"] == "AC"]
    held_text = f"right on {', '.join(held)}; " if held else ""
    failures = ", ".join(f"{r['verdict']} on {r['tier']}" for r in failed)
    if all(r["verdict"] in ("TLE", "MLE") for r in failed):
        return failed[0]["verdict"], f"parent too slow: {held_text}{failures}"
    wrong = next(r for r in failed if r["verdict"] not in ("TLE", "MLE"))
    if held:
        return wrong["verdict"], f"parent now wrong: {held_text}{failures}"
    return wrong["verdict"], (
        f"parent now wrong from the first tier on ({failures}): the answer changed; whether "
        "its approach is insufficient is the judge's call"
    )


def check_against_parent(ctx: Ctx, cand: Candidate) -> bool:
    """Run the parent's reference on the candidate's hidden tests, tier by tier (under its output
    contract), and record whether it is now wrong, too slow, or still right, and on which tiers.
    With ``require_parent_insufficient`` (on by default) a parent that still solves every test
    makes the candidate not_harder: the mutation did not make the parent's approach
    insufficient. Returns whether the candidate may go on."""
    parent_code = cand.parent.reference_solution
    if not parent_code.strip():
        return True
    rows = _parent_by_tier(ctx, cand, parent_code)
    verdict, outcome = parent_outcome(rows)
    entry = {
        "step": "parent check",
        "outcome": outcome,
        "verdict": verdict,
        "passed": sum(r["passed"] for r in rows),
        "total": sum(r["total"] for r in rows),
        "tiers": rows,
    }
    append_ledger(cand, entry)
    cand.generators = {**cand.generators, "parent_check": verdict, "parent_outcome": outcome}
    cand.save(update_fields=["validation_ledger", "generators"])
    if verdict == "AC" and ctx.settings.require_parent_insufficient:
        decide_candidate(
            ctx,
            cand,
            Decision.NOT_HARDER,
            "the parent's reference still solves every new test (require_parent_insufficient)",
        )
        return False
    return True
