"""BenchEvolver's ``validate_execute`` stage: the witnesses vote on the public examples and the
brute force checks the hidden tests in the sandbox; a disagreement asks for a repair."""

from __future__ import annotations

from evolution.benchevolver.engine import validate
from evolution.benchevolver.models import Candidate, CandidateStage, Decision
from evolution.sandbox import contracts
from evolution.services import execution
from evolution.streams.errors import SandboxFailure

from .accept import decide_candidate
from .common import (
    Action,
    Ctx,
    action_candidate,
    append_ledger,
    candidate_contract,
    move_candidate,
)
from .validation import (
    check_against_parent,
    request_repair_or_reject,
    witness_harness,
    witness_pairs,
)


def _same_under_contract(cand: Candidate, limits):
    """same(actual, expected, input) under the candidate's contract; a checker contract runs
    the writer's checker, sandboxed, once per pair."""
    contract = candidate_contract(cand)
    if contract["kind"] != "checker":
        harness = witness_harness(cand)
        return lambda actual, expected, given: bool(
            contracts.same_output(expected, actual, contract, harness=harness)
        )

    def same(actual, expected, given):
        doc = {"input": given, "expected": expected, "actual": actual}
        try:
            (verdict,) = contracts.checker_verdicts(contract["checker"], [doc], limits=limits)
        except RuntimeError as exc:
            raise SandboxFailure(str(exc))
        return verdict == "AC"

    return same


def _checker_accepts_the_reference(ctx: Ctx, cand: Candidate, limits) -> bool:
    """A checker must accept the reference's own outputs (run once per candidate, recorded);
    one that rejects them, or crashes, would fail every right answer: the candidate is invalid."""
    contract = candidate_contract(cand)
    gen = cand.generators
    if contract["kind"] != "checker" or gen.get("contract_verified"):
        return True
    docs = [
        {"input": t["input"], "expected": t["output"], "actual": t["output"]} for t in cand.tests
    ]
    try:
        verdicts = contracts.checker_verdicts(contract["checker"], docs, limits=limits)
    except RuntimeError as exc:
        raise SandboxFailure(str(exc))
    bad = [i + 1 for i, v in enumerate(verdicts) if v != "AC"]
    append_ledger(
        cand,
        {
            "step": "output contract",
            "contract": contracts.describe(contract),
            "outcome": "checker accepts the reference's outputs" if not bad else "rejected",
            "tests": len(docs),
        },
    )
    if bad:
        cand.save(update_fields=["validation_ledger"])
        decide_candidate(
            ctx,
            cand,
            Decision.INVALID,
            f"the declared checker rejects the reference's own output on test(s) {bad[:5]}",
        )
        return False
    cand.generators = {**gen, "contract_verified": True}
    cand.save(update_fields=["generators", "validation_ledger"])
    return True


def act_validate_execute(ctx: Ctx, action: Action) -> None:
    cand = action_candidate(action)
    limits = ctx.limits()
    if not _checker_accepts_the_reference(ctx, cand, limits):
        return
    gen = cand.generators
    public = witness_pairs([t for t in cand.tests if not t["hidden"]])
    hidden = witness_pairs([t for t in cand.tests if t["hidden"]])
    same = _same_under_contract(cand, limits)
    # The brute force is run as the task's harness runs code (stdin, or the call).
    run = {"harness": witness_harness(cand), "entry_point": cand.entry_point, "limits": limits}
    outcomes = execution.run_batch(gen["brute_force"], [t["input"] for t in public], **run)
    if any(o.status == "SE" for o in outcomes):
        raise SandboxFailure("sandbox failure while running the brute force")
    brute = [o.stdout if o.status == "OK" else None for o in outcomes]
    result = validate.vote(
        [t["output"] for t in public],
        brute,
        gen["oracle_outputs"],
        same,
        inputs=[t["input"] for t in public],
    )
    append_ledger(
        cand,
        {
            "step": "vote",
            "outcome": "agree" if result.agree else f"disagree: repair {result.target}",
            "oracle_overruled": result.oracle_overruled,
            "examples": result.per_example,
            "brute_force_status": [o.status for o in outcomes],
        },
    )
    if not result.agree:
        evidence = "\n".join(
            f"Example {row['example']}: reference={row['reference']!r} brute_force={row['brute_force']!r} "
            f"oracle={row['oracle']!r} ({row['verdict']})"
            for row in result.per_example
            if row["verdict"] != "agree"
        )
        request_repair_or_reject(
            ctx,
            cand,
            result.target,
            evidence,
            f"public-example vote disagrees ({result.target} suspected)",
        )
        return
    outcomes = execution.run_batch(gen["brute_force"], [t["input"] for t in hidden], **run)
    if any(o.status == "SE" for o in outcomes):
        raise SandboxFailure("sandbox failure while running the brute force on hidden tests")
    check = validate.hidden_check(
        hidden, outcomes, lambda actual, expected, given: same(actual, expected, given)
    )
    append_ledger(
        cand,
        {
            "step": "hidden check",
            "outcome": "agree" if check.agree else "counterexample",
            "checked": check.checked,
            "infeasible": check.infeasible,
            "counterexample": check.counterexample,
        },
    )
    if not check.agree:
        ce = check.counterexample
        evidence = (
            f"Hidden {ce['tier']} test input:\n{ce['input']}\nreference output: {ce['reference_output']!r}\n"
            f"brute-force output: {ce['brute_force_output']!r}"
        )
        # The vetted brute force and the reference disagree on a concrete input: the reference is
        # the suspect unless the brute force crashed.
        target = (
            validate.BRUTE_FORCE
            if ce["brute_force_output"] in ("RE", "WA", "CE")
            else validate.REFERENCE
        )
        request_repair_or_reject(
            ctx, cand, target, evidence, "brute force disagrees with the reference on a hidden test"
        )
        return
    if not check_against_parent(ctx, cand):
        return
    move_candidate(cand, CandidateStage.VALIDATED, "validation_ledger", valid=True)
