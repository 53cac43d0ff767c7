"""BenchEvolver's ``write_tests`` stage: the model writes the candidate's test generator (and,
for a stdin task with input validation on, its input validator)."""

from __future__ import annotations

from evolution.benchevolver.engine import materialize
from evolution.benchevolver.engine.types import StageError
from evolution.benchevolver.models import Candidate, CandidateStage, Decision
from evolution.llm import BudgetExhausted, LLMError

from .accept import decide_candidate
from .common import (
    Action,
    Ctx,
    action_candidate,
    append_ledger,
    move_candidate,
    parse_answer,
)


def act_write_tests(ctx: Ctx, action: Action) -> None:
    cand = action_candidate(action)
    tiers = list(ctx.tier_counts())
    messages, template = materialize.generator_messages(
        statement=cand.generators.get("statement_body", cand.statement),
        code=cand.code,
        harness=cand.harness,
        tiers=tiers,
    )
    feedback = cand.generators.get("generator_feedback")
    if feedback:
        messages.append(
            {"role": "user", "content": f"The previous generator failed: {feedback}. Fix it."}
        )
    # After a statement repair the generator is written again from the repaired statement:
    # a key of its own (the keys of a candidate never repaired stay as they were).
    revision = f";statement={cand.spec_repairs}" if cand.spec_repairs else ""
    try:
        answer = ctx.chat(
            "test_generator",
            messages,
            template,
            key=f"round={cand.round};try={cand.test_repairs}{revision}",
            candidate=cand,
        )
        program = parse_answer(answer, materialize.parse_generator)
    except StageError as exc:
        decide_candidate(ctx, cand, Decision.INVALID, exc.reason)
        return
    except BudgetExhausted:
        raise
    except LLMError as exc:
        decide_candidate(ctx, cand, Decision.ERROR, f"model call failed: {exc}")
        return
    gen = {**cand.generators, "program": program}
    if ctx.settings.validate_inputs and cand.harness == "stdio" and "input_validator" not in gen:
        gen["input_validator"] = _write_input_validator(ctx, cand)
    move_candidate(cand, CandidateStage.GENERATED, "validation_ledger", generators=gen)


def _write_input_validator(ctx: Ctx, cand: Candidate) -> str:
    """The statement's input validator (written from the statement alone, like the brute
    force); "" when none could be had, recorded in the ledger (inputs then go unchecked)."""
    messages, template = materialize.validator_messages(
        statement=cand.generators.get("statement_body", cand.statement)
    )
    try:
        answer = ctx.chat(
            "input_validator",
            messages,
            template,
            key=f"round={cand.round};repair={cand.spec_repairs}",
            candidate=cand,
        )
        return parse_answer(answer, materialize.parse_validator)
    except BudgetExhausted:
        raise
    except (StageError, LLMError) as exc:
        why = exc.reason if isinstance(exc, StageError) else f"model call failed: {exc}"
        append_ledger(cand, {"step": "input validator", "outcome": f"none: {why}"[:300]})
        return ""
