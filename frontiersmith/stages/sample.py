"""Stage ``sample``: the n sampled solutions of the round's filtered candidates. One step asks
for the action's candidate's missing solutions and then the next candidates', as many side by
side as the solver endpoint takes; each candidate's solutions are stored in sample order."""

from __future__ import annotations

from evolution.llm import fanout, mark_unparsable
from evolution.llm.parsing import extract_code

from ..engine import prompts
from ..models import CandidateStage, FrontierCandidate
from .common import Action, Ctx, candidate_key, fan_out_calls, raise_first, round_candidates


def _batch(ctx: Ctx, action: Action) -> list[tuple[FrontierCandidate, int]]:
    n, width = ctx.settings.solutions_per_candidate, ctx.solver_width()
    first = FrontierCandidate.objects.get(pk=action.candidate_id)
    rest = (
        round_candidates(ctx)
        .filter(stage=CandidateStage.FILTERED, decision="")
        .exclude(pk=first.pk)
        .order_by("index")
    )
    asks: list[tuple[FrontierCandidate, int]] = []
    for c in [first, *rest]:
        for i in range(len(c.solutions), n):
            if len(asks) >= fanout.step_calls(width):
                return asks
            asks.append((c, i))
    return asks


def _ask(ctx: Ctx, c: FrontierCandidate, i: int) -> str:
    template = prompts.load("solve")
    answer = ctx.chat(
        template.role,
        template.messages(statement=c.statement),
        template,
        key=f"{candidate_key(c)};sample={i}",
        temperature=ctx.settings.solver_temperature,
    )
    content, call_id = answer.content, answer.call_id
    try:
        return extract_code(content)
    except Exception as exc:  # ParseError: a sample without code takes no part in divergence
        mark_unparsable(call_id, str(exc))
        return ""


def _sample(ctx: Ctx, action: Action) -> None:
    asks = _batch(ctx, action)
    outcomes = fan_out_calls([lambda a=a: _ask(ctx, *a) for a in asks], ctx.solver_width())
    by_candidate: dict[int, tuple[FrontierCandidate, list]] = {}
    for (c, _), outcome in zip(asks, outcomes, strict=True):
        by_candidate.setdefault(c.pk, (c, []))[1].append(outcome)
    for c, answers in by_candidate.values():
        codes = []
        for answer in answers:  # sample order; a failed call ends what this step can store
            if isinstance(answer, BaseException):
                break
            codes.append(answer)
        if codes:
            # Append only if nobody appended in between (the lease makes that rare, this
            # makes it safe).
            FrontierCandidate.objects.filter(pk=c.pk, solutions=c.solutions).update(
                solutions=[*c.solutions, *codes]
            )
    raise_first(outcomes)
