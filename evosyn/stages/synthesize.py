"""Stage ``synthesize``: one new problem written with seeds as in-context examples (function-level
or stdin/stdout, as its examples are); a near-duplicate of a seed or an earlier problem is
pruned."""

from __future__ import annotations

import contextlib

from django.db import IntegrityError, transaction

from evolution.benchevolver.engine import judge as judge_stage
from evolution.llm import BudgetExhausted, LLMError, ParseError, mark_unparsable

from ..engine import prompts as P
from ..models import Instance, InstanceRole, InstanceStatus
from .common import Action, Ctx


def _synthesize(ctx: Ctx, action: Action) -> None:
    """One new problem, two seeds as in-context examples; a near-duplicate of a seed or of an
    earlier synthesized problem is recorded as pruned."""
    slot = action.number
    seeds = list(
        ctx.esc.instances.filter(role=InstanceRole.SEED).select_related("problem").order_by("slot")
    )
    first = seeds[slot % len(seeds)]
    # The new problem takes its first example's form (a function, or stdin/stdout); both
    # examples share it.
    alike = [e for e in seeds if e.harness == first.harness]
    start = alike.index(first)
    examples = [alike[(start + k) % len(alike)] for k in range(min(2, len(alike)))]
    stdio = first.harness == "stdio"
    messages, template = P.synthesize_messages(
        examples=[e.statement for e in examples], stdio=stdio
    )
    fields = {"status": InstanceStatus.PENDING, "status_reason": ""}
    try:
        answer = ctx.chat(
            "synthesizer",
            messages,
            template,
            key=f"synth={slot}",
            temperature=ctx.settings.synth_temperature,
        )
        try:
            fields.update(P.parse_problem(answer.content, stdio=stdio))
        except ParseError as exc:
            mark_unparsable(answer.call_id, str(exc))
            fields.update(status=InstanceStatus.PRUNED, status_reason=f"unparsable problem: {exc}")
    except BudgetExhausted:
        raise
    except LLMError as exc:
        fields.update(status=InstanceStatus.PRUNED, status_reason=f"model call failed: {exc}")
    if fields["status"] == InstanceStatus.PENDING:
        earlier = {f"seed {i.problem.origin_id or i.problem.public_id}": i.statement for i in seeds}
        earlier.update(
            {
                f"synthesized {i.slot}": i.statement
                for i in ctx.esc.instances.filter(role=InstanceRole.SYNTHETIC).exclude(statement="")
            }
        )
        dup = judge_stage.near_duplicate(
            fields["statement"], earlier, ctx.settings.duplicate_threshold
        )
        if dup.duplicate:
            fields.update(
                status=InstanceStatus.PRUNED,
                status_reason=f"near-duplicate of {dup.against} (similarity {dup.score:.2f})",
            )
    with contextlib.suppress(IntegrityError), transaction.atomic():
        Instance.objects.create(
            evosyn=ctx.esc,
            role=InstanceRole.SYNTHETIC,
            slot=slot,
            problem=examples[0].problem,
            **fields,
        )
