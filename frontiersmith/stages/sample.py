"""Stage ``sample``: the n sampled solutions of a candidate, one per action."""

from __future__ import annotations

from evolution.llm import mark_unparsable
from evolution.llm.parsing import extract_code

from ..engine import prompts
from ..models import FrontierCandidate
from .common import Action, Ctx, _key


def _sample(ctx: Ctx, action: Action) -> None:
    c = FrontierCandidate.objects.get(pk=action.candidate_id)
    i = len(c.solutions)
    template = prompts.load("solve")
    content, call_id = ctx.chat(
        ctx.fc.solver_endpoint,
        template.messages(statement=c.statement),
        template=template,
        key=f"{_key(c)};sample={i}",
        temperature=ctx.settings.solver_temperature,
    )
    try:
        code = extract_code(content)
    except Exception as exc:  # ParseError: a sample without code takes no part in divergence
        mark_unparsable(call_id, str(exc))
        code = ""
    # Append only if nobody appended in between (the lease makes that rare, this makes it safe).
    FrontierCandidate.objects.filter(pk=c.pk, solutions=c.solutions).update(
        solutions=[*c.solutions, code]
    )
