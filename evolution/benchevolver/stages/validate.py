"""Validation (stages ``validate_witnesses``, ``validate_execute``, ``repair``,
``faithfulness_solve``, ``faithfulness_execute``; pure logic in ``engine/validate.py``), by the
lineage's Table 5 column: in the LiveCodeBench column the brute force and oracle vote on the
public examples and the brute force checks the hidden tests, both run through the task's own
harness (stdin or call-based); in the SciCode column statements are checked for faithfulness; a
disagreement asks for a repair."""

from __future__ import annotations

from evolution.benchevolver.engine import materialize, propose, validate
from evolution.benchevolver.engine.types import StageError
from evolution.judging import difficulty
from evolution.llm import BudgetExhausted, LLMError, mark_unparsable
from evolution.llm.fanout import fanout_threads, parallel
from evolution.models import Candidate
from evolution.models.campaigns import CandidateStage, Decision
from evolution.sandbox import contracts
from evolution.services import execution
from evolution.streams.errors import SandboxFailure

from .accept import decide_candidate
from .common import (
    Action,
    Ctx,
    action_candidate,
    append_ledger,
    candidate_comparison,
    candidate_contract,
    candidate_starter,
    move_candidate,
    parse_answer,
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


def _calls(cand: Candidate) -> str:
    """The harness the witnesses run through: the task's, except that an assertion task's
    witnesses are called as the function harness calls them (arguments in, value out)."""
    return "function" if cand.harness == "assert" else cand.harness


def _pairs(tests: list[dict]) -> list[dict]:
    """Tests as (input, output) the witnesses see: an assertion program's call and value."""
    out = []
    for test in tests:
        given, expected = materialize.example_pair(test)
        out.append({**test, "input": given, "output": expected})
    return out


def act_validate_witnesses(ctx: Ctx, action: Action) -> None:
    cand = action_candidate(action)
    gen = dict(cand.generators)
    body = gen.get("statement_body", cand.statement)
    public = _pairs([t for t in cand.tests if not t["hidden"]])
    version = cand.repairs_used
    try:
        if "brute_force" not in gen:
            messages, template = validate.brute_force_messages(
                statement=cand.statement,
                harness=cand.harness,
                entry_point=cand.entry_point,
                starter_code=candidate_starter(ctx, cand),
            )
            answer = ctx.chat(
                "brute_force",
                messages,
                template,
                key=f"round={cand.round};repair={version}",
                candidate=cand,
            )
            gen["brute_force"] = parse_answer(answer, validate.parse_brute_force)
        if "oracle_outputs" not in gen:
            messages, template = validate.oracle_messages(
                statement=body,
                examples=[t["input"] for t in public],
                harness=cand.harness,
                entry_point=cand.entry_point,
            )
            answer = ctx.chat(
                "oracle",
                messages,
                template,
                key=f"round={cand.round};repair={version}",
                candidate=cand,
            )
            gen["oracle_outputs"] = parse_answer(answer, validate.parse_oracle, len(public))
    except StageError as exc:
        decide_candidate(ctx, cand, Decision.INVALID, exc.reason)
        return
    except BudgetExhausted:
        raise
    except LLMError as exc:
        decide_candidate(ctx, cand, Decision.ERROR, f"model call failed: {exc}")
        return
    cand.generators = gen
    cand.save(update_fields=["generators"])


def _request_repair_or_reject(
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


def _same_under_contract(cand: Candidate, limits):
    """same(actual, expected, input) under the candidate's contract; a checker contract runs
    the writer's checker, sandboxed, once per pair."""
    contract = candidate_contract(cand)
    if contract["kind"] != "checker":
        harness = _calls(cand)
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


def _parent_check(ctx: Ctx, cand: Candidate) -> bool:
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


def act_validate_execute(ctx: Ctx, action: Action) -> None:
    cand = action_candidate(action)
    limits = ctx.limits()
    if not _checker_accepts_the_reference(ctx, cand, limits):
        return
    gen = cand.generators
    public = _pairs([t for t in cand.tests if not t["hidden"]])
    hidden = _pairs([t for t in cand.tests if t["hidden"]])
    same = _same_under_contract(cand, limits)
    # The brute force is run as the task's harness runs code (stdin, or the call).
    run = {"harness": _calls(cand), "entry_point": cand.entry_point, "limits": limits}
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
        _request_repair_or_reject(
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
        _request_repair_or_reject(
            ctx, cand, target, evidence, "brute force disagrees with the reference on a hidden test"
        )
        return
    if not _parent_check(ctx, cand):
        return
    move_candidate(cand, CandidateStage.VALIDATED, "validation_ledger", valid=True)


# What a repair changes on its candidate.
REPAIRED_FIELDS = (
    "repairs_used",
    "spec_repairs",
    "validation_ledger",
    "code",
    "code_diff",
    "generators",
)


def _statement_revised(ctx: Ctx, cand: Candidate, gen: dict) -> dict:
    """Drop from ``gen`` what was written from the statement a repair replaced, so that it is
    written again from the repaired one; the ledger entry naming it. The witnesses (brute force
    and oracle, or the faithfulness solutions), the input validator (it checks the stated
    constraints) and the test generator (it writes inputs to them): the candidate goes back to
    ``write_tests``, then its tests are materialized again and the statement re-rendered with
    its examples."""
    rewritten = []
    if ctx.triangulates:
        # Vetting the new statement with a brute force written for the old one would test the
        # old one.
        if gen.pop("brute_force", None) is not None:
            gen["brute_force_regenerated"] = gen.get("brute_force_regenerated", 0) + 1
        rewritten += ["brute force", "oracle"]
    else:
        rewritten.append("faithfulness solutions")
    gen.pop("oracle_outputs", None)
    gen.pop("faithfulness", None)
    gen.pop("input_validator", None)
    if ctx.settings.validate_inputs and cand.harness == "stdio":
        rewritten.append("input validator")
    gen.pop("program", None)
    gen.pop("generator_feedback", None)
    rewritten.append("test generator")
    gen["tests_rewritten"] = gen.get("tests_rewritten", 0) + 1
    return {
        "step": "statement revised",
        "outcome": "written again from the repaired statement: " + ", ".join(rewritten),
        "rewritten": rewritten,
        "revision": cand.spec_repairs,
    }


def act_repair(ctx: Ctx, action: Action) -> None:
    cand = action_candidate(action)
    gen = dict(cand.generators)
    pending = gen.pop("pending_repair")
    target = pending["target"]
    messages, template = validate.repair_messages(
        target=target,
        statement=gen.get("statement_body", cand.statement),
        reference=cand.code,
        brute_force=gen.get("brute_force", ""),
        evidence=pending["evidence"],
        harness=cand.harness,
        entry_point=cand.entry_point,
        starter_code=candidate_starter(ctx, cand),
    )
    try:
        answer = ctx.chat(
            "repair",
            messages,
            template,
            key=f"round={cand.round};repair={cand.repairs_used}",
            candidate=cand,
        )
        fixed = parse_answer(answer, validate.parse_repair, target)
        outcome = "applied"
    except StageError as exc:
        fixed, outcome = None, f"unusable: {exc.reason}"
    except BudgetExhausted:
        raise
    except LLMError as exc:
        fixed, outcome = None, f"model call failed: {exc}"
    cand.repairs_used += 1
    if target == validate.STATEMENT:
        cand.spec_repairs += 1
    append_ledger(
        cand,
        {
            "step": "repair",
            "target": target,
            "why": pending["why"],
            "outcome": outcome,
            "repair": cand.repairs_used,
        },
    )
    back = None  # where a repaired reference or statement goes back to
    if fixed is not None:
        if target == validate.REFERENCE:
            cand.code = fixed
            cand.code_diff = propose.code_diff(cand.parent.reference_solution, fixed)
            back = CandidateStage.GENERATED  # outputs must be materialized again from the new C'
        elif target == validate.BRUTE_FORCE:
            gen["brute_force"] = fixed
        else:
            gen["statement_body"] = fixed
            append_ledger(cand, _statement_revised(ctx, cand, gen))
            back = (
                CandidateStage.PROPOSED
            )  # the tests are written again from the repaired statement
    elif not ctx.triangulates:
        gen.pop("faithfulness", None)
    cand.generators = gen
    if back:
        move_candidate(cand, back, *REPAIRED_FIELDS)
    else:
        cand.save()
    if fixed is None and cand.repairs_used >= ctx.settings.max_candidate_repairs:
        decide_candidate(
            ctx, cand, Decision.INVALID, f"repair failed and the budget is exhausted ({outcome})"
        )


def act_faithfulness_solve(ctx: Ctx, action: Action) -> None:
    cand = action_candidate(action)
    messages, template = difficulty.solver_messages(
        statement=cand.statement,
        harness=cand.harness,
        entry_point=cand.entry_point,
        starter_code=candidate_starter(ctx, cand),
    )
    answers: list[dict] = [{} for _ in range(ctx.settings.faithfulness_check_N)]
    budget: list[BudgetExhausted] = []

    def job(index):
        try:
            answer = ctx.chat(
                "faithfulness",
                messages,
                template,
                key=f"round={cand.round};repair={cand.spec_repairs};attempt={index}",
                candidate=cand,
            )
            code, problem = difficulty.solver_code(answer.content)
            if problem:
                mark_unparsable(answer.call_id, problem)
            answers[index] = {"code": code, "problem": problem}
        except BudgetExhausted as exc:
            budget.append(exc)
        except LLMError as exc:
            # Not an answer: never a 0 pass rate that would call the statement underspecified.
            answers[index] = {"code": "", "infra_error": str(exc)[:500]}

    parallel([lambda i=i: job(i) for i in range(len(answers))], width=fanout_threads())
    if budget:
        raise budget[0]
    cand.generators = {**cand.generators, "faithfulness": answers}
    cand.save(update_fields=["generators"])


def act_faithfulness_execute(ctx: Ctx, action: Action) -> None:
    cand = action_candidate(action)
    tests = [(t["input"], t["output"]) for t in cand.tests]
    answered = [a for a in cand.generators["faithfulness"] if not a.get("infra_error")]
    if not answered:
        # Every solver call failed for transport or provider reasons: ask again, a bounded
        # number of times; an outage is not an underspecified statement.
        gen = dict(cand.generators)
        failed = gen.pop("faithfulness")
        tries = gen.get("faithfulness_infra_retries", 0) + 1
        gen["faithfulness_infra_retries"] = tries
        cand.generators = gen
        if tries >= ctx.settings.infra_retry_limit:
            cand.save(update_fields=["generators"])
            decide_candidate(
                ctx,
                cand,
                Decision.ERROR,
                f"faithfulness solver calls failed {tries} times (infrastructure, not the "
                f"statement): {failed[0]['infra_error'][:300]}",
            )
            return
        cand.save(update_fields=["generators"])
        return
    rates = []
    for answer in answered:
        if not answer.get("code"):
            rates.append(0.0)
            continue
        result = execution.judge(
            answer["code"],
            tests,
            harness=cand.harness,
            limits=ctx.limits(),
            entry_point=cand.entry_point,
            comparison=candidate_comparison(cand),
        )
        if result.verdict == "SE":
            raise SandboxFailure("sandbox failure during the faithfulness check")
        rates.append(result.passed / result.total if result.total else 0.0)
    best = max(rates) if rates else 0.0
    floor = ctx.settings.faithfulness_min_pass_rate
    append_ledger(
        cand,
        {
            "step": "faithfulness",
            "pass_rates": rates,
            "best": best,
            "floor": floor,
            "infrastructure_errors": len(cand.generators["faithfulness"]) - len(answered),
        },
    )
    if validate.faithfulness_passes(best, floor):
        if not _parent_check(ctx, cand):
            return
        move_candidate(cand, CandidateStage.VALIDATED, "validation_ledger", valid=True)
        return
    if cand.spec_repairs >= ctx.settings.faithfulness_max_repair:
        cand.save(update_fields=["validation_ledger"])
        decide_candidate(
            ctx,
            cand,
            Decision.INVALID,
            f"statement underspecified: best-of-N pass rate {best:.2f} < {floor}",
        )
        return
    _request_repair_or_reject(
        ctx,
        cand,
        validate.STATEMENT,
        f"Solutions written from the statement pass at most {best:.0%} of the tests.",
        f"faithfulness best pass rate {best:.2f} below {floor}",
    )
