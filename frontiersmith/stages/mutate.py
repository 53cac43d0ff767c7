"""Stage ``mutate``: one proposal (seed x operator) becomes a candidate problem."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from evolution.llm import fanout, mark_unparsable

from ..engine import formulation, prompts
from ..models import CandidateDecision, CandidateStage, FrontierCandidate, SeedFormulation
from .common import (
    Action,
    Ctx,
    fan_out_calls,
    proposal_of,
    proposals_waiting,
    raise_first,
    stable_id,
)


def _candidate_create(ctx: Ctx, index: int, *, decision: str = "", reason: str = "", **fields):
    rnd = ctx.fc.rounds.get(number=ctx.fc.current_round)
    pid, operator = proposal_of(rnd.pool, index)
    try:
        with transaction.atomic():
            return FrontierCandidate.objects.create(
                frontier=ctx.fc,
                round=rnd.number,
                index=index,
                parent_id=pid,
                operator=operator,
                decision=decision,
                decision_reason=reason,
                stage=CandidateStage.DONE if decision else CandidateStage.PROPOSED,
                **fields,
            )
    except IntegrityError:
        return None  # made by an earlier attempt of this step: never a duplicate


def _mutate(ctx: Ctx, action: Action) -> None:
    """The action's proposal and the round's next ones whose seed is formulated, their calls
    side by side; each candidate is stored under its own index."""
    rnd = ctx.fc.rounds.get(number=ctx.fc.current_round)
    seeds = {
        s.problem_id: s
        for s in SeedFormulation.objects.select_related("problem").filter(frontier=ctx.fc)
    }
    indices = [action.index]
    for index in proposals_waiting(ctx, rnd):
        if len(indices) >= fanout.step_calls(ctx.mutator_width()):
            break
        if index != action.index and proposal_of(rnd.pool, index)[0] in seeds:
            indices.append(index)
    outcomes = fan_out_calls(
        [lambda i=i: _ask(ctx, rnd, seeds, i) for i in indices], ctx.mutator_width()
    )
    for index, outcome in zip(indices, outcomes, strict=True):
        if not isinstance(outcome, BaseException):
            _store(ctx, rnd, seeds, index, outcome)
    raise_first(outcomes)


def _ask(ctx: Ctx, rnd, seeds, index: int):
    pid, operator = proposal_of(rnd.pool, index)
    seed = seeds[pid]
    if not seed.ok:
        return None
    template = prompts.load("mutate")
    return ctx.chat(
        template.role,
        template.messages(
            **seed.as_dict(),
            statement=seed.problem.statement,
            operator_text=formulation.OPERATORS[operator][1],
        ),
        template,
        key=f"round={rnd.number};c={index};seed={stable_id(seed.problem)};op={operator}",
        temperature=ctx.settings.mutation_temperature,
    )


def _store(ctx: Ctx, rnd, seeds, index: int, answer) -> None:
    pid, operator = proposal_of(rnd.pool, index)
    seed = seeds[pid]
    if answer is None:
        _candidate_create(ctx, index, decision=CandidateDecision.UNPARSABLE, reason=seed.error)
        return
    content, call_id = answer.content, answer.call_id
    parent = formulation.Formulation(**seed.as_dict())
    try:
        mutation = formulation.parse_mutation(content, operator=operator, parent=parent)
    except formulation.ParseProblem as exc:
        mark_unparsable(call_id, str(exc))
        _candidate_create(
            ctx,
            index,
            decision=CandidateDecision.UNPARSABLE,
            reason=str(exc),
            parent_formulation=parent.to_dict(),
        )
        return
    _candidate_create(
        ctx,
        index,
        parent_formulation=parent.to_dict(),
        formulation=mutation.formulation.to_dict(),
        title=mutation.title,
        statement=mutation.statement,
        objective=mutation.objective,
        direction=mutation.direction,
    )
