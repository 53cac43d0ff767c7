"""Stage ``write_tests``: one candidate testing of an instance per call (the document's Figure 6
prompt). A testing is the unit-test list one answer holds, as in the document: N testings are N
test-writer answers."""

from __future__ import annotations

from django.db import transaction

from evolution.llm import BudgetExhausted, LLMError, ParseError, mark_unparsable

from ..engine import prompts as P
from ..models import Instance, TestItem
from .common import Action, Ctx, _instance_key, log


def _write_tests(ctx: Ctx, action: Action) -> None:
    """One test-writer call: its unit-test list becomes one testing (testing number = the call
    number), duplicate inputs within the list dropped. An answer with no usable unit test adds
    no testing; the call counts, so ``test_calls`` bounds the retries."""
    inst = Instance.objects.select_related("problem").get(pk=action.instance_id)
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
