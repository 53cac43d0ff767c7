"""Stage ``write_tests``: the N candidate tests of an instance (the document's Figure 6 prompt).
One step makes the action's instance's next test-writer call and, side by side, that of the
next pending instances waiting for tests (bounded by the fan-out setting and the endpoint's
limit); each instance's answer is stored on its own."""

from __future__ import annotations

from django.db import transaction

from evolution.llm import BudgetExhausted, LLMError, ParseError, fanout, mark_unparsable

from ..engine import prompts as P
from ..models import Instance, TestItem
from .common import Action, Ctx, _instance_key, log, pending_like, width_for


def _waits_for_tests(ctx: Ctx, inst: Instance) -> bool:
    s = ctx.settings
    return (
        inst.solutions.count() >= s.solutions_per_problem
        and inst.tests.count() < s.tests_per_problem
        and inst.test_calls_made < s.test_calls
    )


def _write_tests(ctx: Ctx, action: Action) -> None:
    width = width_for(ctx, "test_writer")
    inst = Instance.objects.select_related("problem").get(pk=action.instance_id)
    batch = [inst]
    for other in pending_like(ctx, inst):
        if len(batch) >= fanout.step_calls(width):
            break
        if _waits_for_tests(ctx, other):
            batch.append(other)
    fanout.parallel([lambda i=i: _one_call(ctx, i) for i in batch], width)


def _one_call(ctx: Ctx, inst: Instance) -> None:
    """One test-writer call (the document's Figure 6 prompt); new tests are appended up to N,
    duplicates of an earlier input dropped."""
    call_no = inst.test_calls_made
    existing = list(inst.tests.values_list("index", "input"))
    wanted = ctx.settings.tests_per_problem - len(existing)
    messages, template = P.testing_messages(
        statement=inst.statement, entry_point=inst.entry_point, count=wanted
    )
    tests: list[dict] = []
    try:
        answer = ctx.chat(
            "test_writer",
            messages,
            template,
            key=f"{_instance_key(inst)};tests={call_no}",
            temperature=ctx.settings.test_temperature,
        )
        try:
            tests = P.parse_tests(answer.content)
        except ParseError as exc:
            mark_unparsable(answer.call_id, str(exc))
    except BudgetExhausted:
        raise
    except LLMError as exc:
        log.info("test writer call failed for instance %s: %s", inst.pk, exc)
    seen = {i for _, i in existing}
    next_index = max((i for i, _ in existing), default=-1) + 1
    with transaction.atomic():
        # The conditional UPDATE makes a concurrent rerun of the same call a no-op.
        if not Instance.objects.filter(pk=inst.pk, test_calls_made=call_no).update(
            test_calls_made=call_no + 1
        ):
            return
        for test in tests:
            if next_index >= ctx.settings.tests_per_problem:
                break
            if test["input"] in seen:
                continue
            seen.add(test["input"])
            TestItem.objects.create(
                instance=inst,
                index=next_index,
                input=test["input"],
                output=test["output"],
                call=call_no,
            )
            next_index += 1
