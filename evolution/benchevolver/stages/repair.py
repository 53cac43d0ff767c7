"""BenchEvolver's ``repair`` stage: the part a failed check blamed (statement, reference or
brute force) is rewritten by the model, within the repair budget."""

from __future__ import annotations

from evolution.benchevolver.engine import propose, validate
from evolution.benchevolver.engine.types import StageError
from evolution.benchevolver.models import Candidate, CandidateStage, Decision
from evolution.llm import BudgetExhausted, LLMError

from .accept import decide_candidate
from .common import (
    Action,
    Ctx,
    action_candidate,
    append_ledger,
    candidate_starter,
    move_candidate,
    parse_answer,
)

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
