"""Stage ``mutate``: one proposal (seed x operator) becomes a candidate problem."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from evolution.llm import mark_unparsable

from ..engine import formulation, prompts
from ..models import CandidateDecision, CandidateStage, FrontierCandidate, SeedFormulation
from .common import Action, Ctx, _proposal, stable_id


def _candidate_create(ctx: Ctx, index: int, *, decision: str = "", reason: str = "", **fields):
    rnd = ctx.fc.rounds.get(number=ctx.fc.current_round)
    pid, operator = _proposal(rnd.pool, index)
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
    rnd = ctx.fc.rounds.get(number=ctx.fc.current_round)
    pid, operator = _proposal(rnd.pool, action.index)
    seed = SeedFormulation.objects.select_related("problem").get(frontier=ctx.fc, problem_id=pid)
    if not seed.ok:
        _candidate_create(
            ctx, action.index, decision=CandidateDecision.UNPARSABLE, reason=seed.error
        )
        return
    template = prompts.load("mutate")
    content, call_id = ctx.chat(
        ctx.fc.mutator_endpoint,
        template.messages(
            **seed.as_dict(),
            statement=seed.problem.statement,
            operator_text=formulation.OPERATORS[operator][1],
        ),
        template=template,
        key=f"round={rnd.number};c={action.index};seed={stable_id(seed.problem)};op={operator}",
        temperature=ctx.settings.mutation_temperature,
    )
    parent = formulation.Formulation(**seed.as_dict())
    try:
        mutation = formulation.parse_mutation(content, operator=operator, parent=parent)
    except formulation.ParseProblem as exc:
        mark_unparsable(call_id, str(exc))
        _candidate_create(
            ctx,
            action.index,
            decision=CandidateDecision.UNPARSABLE,
            reason=str(exc),
            parent_formulation=parent.to_dict(),
        )
        return
    _candidate_create(
        ctx,
        action.index,
        parent_formulation=parent.to_dict(),
        formulation=mutation.formulation.to_dict(),
        title=mutation.title,
        statement=mutation.statement,
        objective=mutation.objective,
        direction=mutation.direction,
    )
