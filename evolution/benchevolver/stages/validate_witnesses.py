"""BenchEvolver's ``validate_witnesses`` stage: the brute force and the oracle (the witnesses)
are asked for, in the LiveCodeBench column of Table 5."""

from __future__ import annotations

from evolution.benchevolver.engine import validate
from evolution.benchevolver.engine.types import StageError
from evolution.benchevolver.models import Decision
from evolution.llm import BudgetExhausted, LLMError

from .accept import decide_candidate
from .common import (
    Action,
    Ctx,
    action_candidate,
    candidate_starter,
    parse_answer,
)
from .validation import witness_pairs


def act_validate_witnesses(ctx: Ctx, action: Action) -> None:
    cand = action_candidate(action)
    gen = dict(cand.generators)
    body = gen.get("statement_body", cand.statement)
    public = witness_pairs([t for t in cand.tests if not t["hidden"]])
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
