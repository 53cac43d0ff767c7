"""Stage ``write_tests``: one candidate testing of an instance per call (the document's Figure 6
prompt). A testing is the unit-test list one answer holds, as in the document: N testings are N
test-writer answers. One step makes the action's instance's next call and, side by side, that of
the next pending instances waiting for a testing (bounded by the fan-out setting and the
endpoint's limit); each answer is stored on its own instance."""

from __future__ import annotations

from django.db import transaction

from evolution.llm import BudgetExhausted, LLMError, ParseError, fanout, mark_unparsable

from ..engine import prompts as P
from ..models import Instance, TestItem
from .common import Action, Ctx, _instance_key, log, pending_like, width_for


def _waits_for_tests(ctx: Ctx, inst: Instance) -> bool:
    """The same condition as the kind's next action for ``write_tests`` (``kind._prep_action``):
    solutions made, fewer than N testings, calls left (``test_calls`` per testing)."""
    s = ctx.settings
    return (
        inst.solutions.count() >= s.solutions_per_problem
        and inst.tests.values("call").distinct().count() < s.tests_per_problem
        and inst.test_calls_made < s.tests_per_problem * s.test_calls
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
    """One test-writer call: its unit-test list becomes one testing (testing number = the call
    number), duplicate inputs within the list dropped. An answer with no usable unit test adds
    no testing; the call counts, so ``test_calls`` bounds the retries."""
    call_no = inst.test_calls_made
    messages, template = P.testing_messages(statement=inst.statement, entry_point=inst.entry_point)
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
            tests = P.parse_tests(answer.content, harness=inst.harness)
        except ParseError as exc:
            mark_unparsable(answer.call_id, str(exc))
    except BudgetExhausted:
        raise
    except LLMError as exc:
        log.info("test writer call failed for instance %s: %s", inst.pk, exc)
    with transaction.atomic():
        # The conditional UPDATE makes a concurrent rerun of the same call a no-op.
        if not Instance.objects.filter(pk=inst.pk, test_calls_made=call_no).update(
            test_calls_made=call_no + 1
        ):
            return
        next_index = (
            max(inst.tests.values_list("index", flat=True), default=-1) + 1
        )  # unit tests are numbered across the instance's testings
        seen: set[str] = set()
        for test in tests:
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
