"""Stage ``write_tests``: one candidate testing of an instance per call (the document's Figure 6
prompt). A testing is the unit-test list one answer holds, as in the document: N testings are N
test-writer answers. One step makes the action's instance's due calls and, side by side, those of
the next pending instances waiting for testings, up to the step's calls (bounded by the fan-out
setting and the endpoint's limit); each answer is stored on its own instance, in call order.

With ``tests_as_code`` (section 4.3's variant) an answer is a program that constructs the unit
tests: it runs in the sandbox (one execution, under the campaign's limits and budget) and the
list it prints is the call's testing; the program is kept (``TestProgram``), whatever it did.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction

from evolution import sandbox
from evolution.llm import BudgetExhausted, LLMError, ParseError, fanout, mark_unparsable
from evolution.streams.errors import SandboxFailure

from ..engine import prompts as P
from ..models import Instance, ProgramStatus, TestItem, TestProgram
from .common import (
    Action,
    Ctx,
    instance_key,
    log,
    pending_like,
    reserve_executions,
    spend_executions,
    width_for,
)

# A test program may print long inputs (that is what it is for): its output may be this big.
PROGRAM_OUTPUT_BYTES = 16_000_000


@dataclass
class Answer:
    """One test-writer call's outcome: its unit tests, and with ``tests_as_code`` the program
    that printed them (status, error)."""

    tests: list[dict] = field(default_factory=list)
    program: str | None = None
    status: str = ""
    error: str = ""
    call_id: int | None = None


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
    as_code = ctx.settings.tests_as_code
    if as_code:
        reserve_executions(ctx, len(asks))  # one sandbox run per program, checked before any call
    outcomes = fanout.fan_out(
        [lambda a=a: _ask(ctx, *a) for a in asks], width, return_exceptions=True
    )
    failed: set[int] = set()
    for (other, call_no), outcome in zip(asks, outcomes, strict=True):
        if isinstance(outcome, BaseException) or other.pk in failed:
            # The instance's later calls wait for this one: a rerun asks them again.
            failed.add(other.pk)
            continue
        if outcome.program:
            _run_program(ctx, other, outcome)
        _store(other, call_no, outcome, as_code=as_code)
    fanout.raise_first(outcomes)


def _ask(ctx: Ctx, inst: Instance, call_no: int) -> Answer:
    """One test-writer call: its unit-test list (empty when the answer holds no usable unit
    test or the call failed; the call counts, so ``test_calls`` bounds the retries), or with
    ``tests_as_code`` the program to run."""
    as_code = ctx.settings.tests_as_code
    prompt = P.testing_code_messages if as_code else P.testing_messages
    messages, template = prompt(statement=inst.statement, entry_point=inst.entry_point)
    try:
        answer = ctx.chat(
            "test_writer",
            messages,
            template,
            key=f"{instance_key(inst)};tests={call_no}",
            temperature=ctx.settings.test_temperature,
        )
        try:
            if as_code:
                return Answer(program=P.parse_test_program(answer.content), call_id=answer.call_id)
            return Answer(tests=P.parse_tests(answer.content, harness=inst.harness))
        except ParseError as exc:
            mark_unparsable(answer.call_id, str(exc))
            return Answer(
                status=ProgramStatus.UNPARSABLE,
                error=f"unparsable answer: {exc}",
                call_id=answer.call_id,
            )
    except BudgetExhausted:
        raise
    except LLMError as exc:
        log.info("test writer call failed for instance %s: %s", inst.pk, exc)
        return Answer(status=ProgramStatus.UNPARSABLE, error=f"model call failed: {exc}")


def _run_program(ctx: Ctx, inst: Instance, answer: Answer) -> None:
    """Section 4.3: run the test program in the sandbox (no input); the JSON list of unit tests
    it prints is the answer's testing. A program the sandbox stops, that crashes or that
    prints no such list gives no testing, its reason recorded."""
    limits = sandbox.Limits(
        time_s=ctx.limits.time_s,
        memory_mb=ctx.limits.memory_mb,
        max_output_bytes=PROGRAM_OUTPUT_BYTES,
    )
    (outcome,) = sandbox.run_batch(answer.program, [""], harness="stdio", limits=limits)
    if outcome.status == "SE":
        raise SandboxFailure(f"sandbox failure: {outcome.stderr[:300]}")
    spend_executions(ctx, 1)
    if outcome.status != "OK":
        answer.status = ProgramStatus.FAILED
        answer.error = f"{outcome.status}: {(outcome.stderr or '').strip()[-600:]}".strip()
        return
    try:
        answer.tests = P.program_tests(outcome.stdout, harness=inst.harness)
    except ParseError as exc:
        answer.status, answer.error = ProgramStatus.NO_TESTS, f"its output: {exc}"
        return
    answer.status = ProgramStatus.OK


def _store(inst: Instance, call_no: int, answer: Answer, *, as_code: bool = False) -> None:
    """One call's answer becomes one testing (testing number = the call number), duplicate
    inputs within the list dropped; an answer with no usable unit test adds no testing. A test
    program is kept with what it did."""
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
        for test in answer.tests:
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
        if as_code:
            TestProgram.objects.create(
                instance=inst,
                call=call_no,
                code=answer.program or "",
                status=answer.status or ProgramStatus.UNPARSABLE,
                error=answer.error[:4000],
                unit_tests=len(seen),
                call_id=answer.call_id,
            )
