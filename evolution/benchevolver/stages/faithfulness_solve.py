"""BenchEvolver's ``faithfulness_solve`` stage: in the SciCode column, solvers answer from the
statement alone, to check that it states the task the reference solves."""

from __future__ import annotations

from evolution.judging import difficulty
from evolution.llm import BudgetExhausted, LLMError, mark_unparsable
from evolution.llm.fanout import fanout_threads, parallel

from .common import (
    Action,
    Ctx,
    action_candidate,
    candidate_starter,
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
