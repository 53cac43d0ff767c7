"""Stage ``synthesize``: one new problem written with seeds as in-context examples (function-level
or stdin/stdout, as its examples are); a near-duplicate of a seed or an earlier problem is
pruned."""

from __future__ import annotations

import contextlib

from django.db import IntegrityError, transaction

from evolution.judging import duplicates
from evolution.llm import BudgetExhausted, LLMError, ParseError, fanout, mark_unparsable

from ..engine import prompts as P
from ..models import Instance, InstanceRole, InstanceStatus
from .common import Action, Ctx, width_for


def _synthesize(ctx: Ctx, action: Action) -> None:
    """New problems for the action's slot and the next empty ones, their calls side by side;
    each is then judged for near-duplicates and stored in slot order (so a problem is compared
    with the problems of every earlier slot, as one at a time)."""
    seeds = list(
        ctx.esc.instances.filter(role=InstanceRole.SEED).select_related("problem").order_by("slot")
    )
    made = set(ctx.esc.instances.filter(role=InstanceRole.SYNTHETIC).values_list("slot", flat=True))
    width = width_for(ctx, "synthesizer")
    slots = [action.number]
    for slot in range(action.number + 1, ctx.settings.synth_problems):
        if len(slots) >= fanout.step_calls(width):
            break
        if slot not in made:
            slots.append(slot)
    outcomes = fanout.fan_out(
        [lambda n=n: _ask(ctx, seeds, n) for n in slots], width, return_exceptions=True
    )
    for slot, outcome in zip(slots, outcomes, strict=True):
        if not isinstance(outcome, BaseException):
            _store(ctx, seeds, slot, outcome)
    fanout.raise_first(outcomes)


def _examples(seeds, slot: int):
    """The slot's two in-context examples: the new problem takes its first example's form (a
    function, or stdin/stdout), and both examples share it."""
    first = seeds[slot % len(seeds)]
    alike = [e for e in seeds if e.harness == first.harness]
    start = alike.index(first)
    return [alike[(start + k) % len(alike)] for k in range(min(2, len(alike)))]


def _ask(ctx: Ctx, seeds, slot: int) -> dict:
    """One new problem, two seeds as in-context examples: the instance's fields."""
    examples = _examples(seeds, slot)
    stdio = examples[0].harness == "stdio"
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
    return fields


def _store(ctx: Ctx, seeds, slot: int, fields: dict) -> None:
    """A near-duplicate of a seed or of an earlier synthesized problem is recorded as pruned."""
    examples = _examples(seeds, slot)
    if fields["status"] == InstanceStatus.PENDING:
        earlier = {f"seed {i.problem.origin_id or i.problem.public_id}": i.statement for i in seeds}
        earlier.update(
            {
                f"synthesized {i.slot}": i.statement
                for i in ctx.esc.instances.filter(role=InstanceRole.SYNTHETIC).exclude(statement="")
            }
        )
        dup = duplicates.near_duplicate(
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
