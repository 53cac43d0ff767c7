"""Stage ``execute``: an instance's M x N pass matrix, every solution against every testing (a
unit-test list) in the sandbox (cached per solution and test suite), once the inputs written as
Python code (Figure 6's eval() inputs) are evaluated, in the sandbox too."""

from __future__ import annotations

import contextlib
import hashlib
import json

from django.db import IntegrityError, transaction

from evolution import sandbox
from evolution.streams.errors import SandboxFailure
from evolution.streams.kinds import unit_transition

from ..engine import prompts as P
from ..models import Instance, InstanceRole, InstanceStatus, MatrixRow, TestItem
from .common import KIND_NAME, Action, Ctx, reserve_executions, spend_executions


def _suite_sha(payload) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def verdict_row(
    ctx: Ctx,
    code: str,
    specs: list[sandbox.TestSpec],
    *,
    harness: str,
    entry_point: str,
    comparison: dict | None = None,
) -> tuple[list[str], int]:
    """One solution's verdict per test, from the cache or the sandbox: (verdicts, executions
    spent). A compile error fails every test; a sandbox failure raises SandboxFailure."""
    limits = ctx.limits
    suite = _suite_sha(
        {
            "harness": harness,
            "entry_point": entry_point,
            "tests": [[t.input, t.output] for t in specs],
            "limits": [limits.time_s, limits.memory_mb],
            **({"comparison": comparison} if comparison else {}),
        }
    )
    code_key = hashlib.sha256(code.encode()).hexdigest()
    cached = MatrixRow.objects.filter(code_sha=code_key, suite_sha=suite).first()
    if cached is not None:
        return list(cached.verdicts), 0
    result = sandbox.judge(
        code,
        specs,
        harness=harness,
        limits=limits,
        entry_point=entry_point,
        comparison=comparison,
    )
    if result.verdict == "SE":
        raise SandboxFailure(f"sandbox failure: {result.to_dict()['tests'][:1]}")
    verdicts = [t.verdict for t in result.tests]
    verdicts += [result.verdict] * (len(specs) - len(verdicts))
    with contextlib.suppress(IntegrityError), transaction.atomic():
        MatrixRow.objects.create(code_sha=code_key, suite_sha=suite, verdicts=verdicts)
    return verdicts, len(specs)


def _evaluate_inputs(ctx: Ctx, inst: Instance) -> bool:
    """Figure 6's eval() inputs: every unit test whose input was written as Python code gets
    the code's value as its input, evaluated in the sandbox (``EVALUATE_INPUT``). Code that
    names what does not exist, or whose value is not an input, leaves the literal text as the
    input. A unit test whose code fails otherwise or is stopped by the sandbox's limits (time,
    memory, output) is dropped: it has no input to run. True when one was dropped (a testing
    may have lost its last unit test)."""
    pending = list(inst.tests.exclude(input_expr="").filter(input_expr_state="").order_by("index"))
    if not pending:
        return False
    reserve_executions(ctx, len(pending))
    outcomes = sandbox.run_batch(
        P.EVALUATE_INPUT, [t.input_expr for t in pending], harness="stdio", limits=ctx.limits
    )
    spend_executions(ctx, len(pending))
    if any(o.status == "SE" for o in outcomes):
        raise SandboxFailure(f"sandbox failure: {outcomes[0].stderr[:300]}")
    dropped = False
    for item, outcome in zip(pending, outcomes, strict=True):
        if outcome.status != "OK":
            item.delete()
            dropped = True
            continue
        value = P.evaluated_input(outcome.stdout, harness=inst.harness)
        TestItem.objects.filter(pk=item.pk).update(
            input=item.input if value is None else value,
            input_expr_state="literal" if value is None else "evaluated",
        )
    return dropped


def _execute(ctx: Ctx, action: Action) -> None:
    """The M x N matrix of solutions x testings: a solution passes a testing when it passes
    every unit test of that testing's list. Each solution runs once on the unit tests of all
    its instance's testings (cached per solution and suite, through the function or the
    stdin/stdout harness of ``evolution.sandbox.judge``); for a seed also on the human
    testing, the seed's own test suite (passing means passing all of it)."""
    inst = Instance.objects.select_related("problem").get(pk=action.instance_id)
    if _evaluate_inputs(ctx, inst):
        return  # the next action is worked out again: a testing may need another call
    solutions = [s for s in inst.solutions.order_by("index") if s.code]
    testings = inst.testings()
    give_up = InstanceStatus.UNUSABLE if inst.role == InstanceRole.SEED else InstanceStatus.PRUNED
    if len(solutions) < 2 or not testings:
        unit_transition(
            KIND_NAME,
            Instance.objects.filter(pk=inst.pk),
            source=InstanceStatus.PENDING,
            target=give_up,
            status_reason=(
                f"too little to rank: {len(solutions)} solution(s) with code, "
                f"{len(testings)} testing(s)"
            ),
        )
        return
    # The unit tests of every testing, each distinct (input, output) run once per solution.
    specs: list[sandbox.TestSpec] = []
    position: dict[tuple[str, str], int] = {}
    members: list[list[int]] = []
    for items in testings.values():
        columns = []
        for item in items:
            key = (item.input, item.output)
            if key not in position:
                position[key] = len(specs)
                specs.append(sandbox.TestSpec(input=item.input, output=item.output))
            columns.append(position[key])
        members.append(columns)
    human_specs = []
    if inst.role == InstanceRole.SEED:
        human_specs = [
            sandbox.TestSpec(input=t.input, output=t.output)
            for t in inst.problem.tests.order_by("tier", "ordinal")
        ]
    reserve_executions(ctx, len(solutions) * (len(specs) + len(human_specs)))
    rows, verdicts, human = [], [], []
    spent = 0
    try:
        for sol in solutions:
            row, used = verdict_row(
                ctx, sol.code, specs, harness=inst.harness, entry_point=inst.entry_point
            )
            spent += used
            verdicts.append(row)
            rows.append([1 if all(row[k] == "AC" for k in cols) else 0 for cols in members])
            if human_specs:
                hrow, used = verdict_row(
                    ctx,
                    sol.code,
                    human_specs,
                    harness=inst.problem.harness,
                    entry_point=inst.problem.entry_point,
                    comparison=inst.problem.comparison or None,
                )
                spent += used
                human.append(all(v == "AC" for v in hrow))
    finally:
        spend_executions(ctx, spent)
    unit_transition(
        KIND_NAME,
        Instance.objects.filter(pk=inst.pk),
        source=InstanceStatus.PENDING,
        target=InstanceStatus.READY,
        matrix={
            "solutions": [s.index for s in solutions],
            "tests": list(testings),  # the testings' numbers, one column each
            "sizes": [len(items) for items in testings.values()],
            "rows": rows,
            "verdicts": verdicts,  # per solution, per distinct unit test
        },
        human=human if human_specs else None,
    )
