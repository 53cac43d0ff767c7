"""Stage ``write_tests``: one candidate testing of an instance per call (the document's Figure 6
prompt). A testing is the unit-test list one answer holds, as in the document: N testings are N
test-writer answers. One step makes the action's instance's due calls and, side by side, those of
the next pending instances waiting for testings, up to the step's calls (bounded by the fan-out
setting and the endpoint's limit); each answer is stored on its own instance, in call order."""

from __future__ import annotations

from django.db import transaction

from evolution.llm import BudgetExhausted, LLMError, ParseError, fanout, mark_unparsable

from ..engine import prompts as P
from ..models import Instance, TestItem
from .common import Action, Ctx, _instance_key, log, pending_like, width_for


def _calls_due(ctx: Ctx, inst: Instance) -> int:
    """How many more test-writer calls the instance certainly makes: the same condition as the
    kind's next action for ``write_tests`` (``kind._prep_action``: solutions made, fewer than N
    testings, calls left, ``test_calls`` per testing). One answer adds at most one testing, so
    one call after the other would make at least N - testings more calls before it stops (fewer
    when the calls run out): asking them at once asks nothing it would not."""
    s = ctx.settings
    if inst.solutions.count() < s.solutions_per_problem:
        return 0
    testings = inst.tests.values("call").distinct().count()
    calls_left = s.tests_per_problem * s.test_calls - inst.test_calls_made
    return max(0, min(s.tests_per_problem - testings, calls_left))


def _write_tests(ctx: Ctx, action: Action) -> None:
    """The action's instance's due calls, then the next pending instances' up to the step's
    calls (``fanout.step_calls``), side by side; the answers are stored in call order per
    instance, as one call after the other would store them."""
    width = width_for(ctx, "test_writer")
    inst = Instance.objects.select_related("problem").get(pk=action.instance_id)
    target = fanout.step_calls(width)
    asks: list[tuple[Instance, int]] = []
    for other in [inst, *pending_like(ctx, inst)]:
        due = _calls_due(ctx, other)
        if other is not inst:
            due = min(due, target - len(asks))
        asks += [(other, other.test_calls_made + k) for k in range(due)]
        if len(asks) >= target:
            break
    outcomes = fanout.fan_out(
        [lambda a=a: _ask(ctx, *a) for a in asks], width, return_exceptions=True
    )
    failed: set[int] = set()
    for (other, call_no), outcome in zip(asks, outcomes, strict=True):
        if isinstance(outcome, BaseException) or other.pk in failed:
            # The instance's later calls wait for this one: a rerun asks them again.
            failed.add(other.pk)
            continue
        _store(other, call_no, outcome)
    fanout.raise_first(outcomes)


def _ask(ctx: Ctx, inst: Instance, call_no: int) -> list[dict]:
    """One test-writer call: its unit-test list (empty when the answer holds no usable unit
    test or the call failed; the call counts, so ``test_calls`` bounds the retries)."""
    messages, template = P.testing_messages(statement=inst.statement, entry_point=inst.entry_point)
    try:
        answer = ctx.chat(
            "test_writer",
            messages,
            template,
            key=f"{_instance_key(inst)};tests={call_no}",
            temperature=ctx.settings.test_temperature,
        )
        try:
            return P.parse_tests(answer.content, harness=inst.harness)
        except ParseError as exc:
            mark_unparsable(answer.call_id, str(exc))
    except BudgetExhausted:
        raise
    except LLMError as exc:
        log.info("test writer call failed for instance %s: %s", inst.pk, exc)
    return []


def _store(inst: Instance, call_no: int, tests: list[dict]) -> None:
    """One call's answer becomes one testing (testing number = the call number), duplicate
    inputs within the list dropped; an answer with no usable unit test adds no testing."""
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
                input_expr=test.get("input_expr", ""),
                call=call_no,
            )
            next_index += 1
