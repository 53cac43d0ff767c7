"""BenchEvolver's ``materialize`` stage (pure logic in ``engine/materialize.py``): the test
generator ``write_tests`` wrote is run in the sandbox, and the candidate's public and hidden
tests are stored."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from django.conf import settings

from evolution import sandbox
from evolution.benchevolver.engine import materialize, propose
from evolution.benchevolver.engine.types import StageError
from evolution.benchevolver.models import Candidate, CandidateStage, Decision
from evolution.services import execution
from evolution.streams.errors import SandboxFailure

from .accept import decide_candidate
from .common import (
    Action,
    Ctx,
    action_candidate,
    append_ledger,
    candidate_comparison,
    move_candidate,
)


def _input_checker(ctx: Ctx, cand: Candidate, examples: list[str]):
    """A function judging generated inputs with the statement's validator, or None. A validator
    that refuses the statement's own examples is itself wrong: it is recorded and not used."""
    validator = cand.generators.get("input_validator") or ""
    if not validator:
        return None
    limits = ctx.limits()

    def check(inputs: list[str]) -> list[tuple[bool, str]]:
        outcomes = execution.run_batch(validator, inputs, harness="stdio", limits=limits)
        if any(o.status == "SE" for o in outcomes):
            raise SandboxFailure("sandbox failure while running the input validator")
        return materialize.validator_verdicts(outcomes)

    refused = [i + 1 for i, (ok, _) in enumerate(check(examples)) if not ok] if examples else []
    if refused:
        append_ledger(
            cand,
            {
                "step": "input validator",
                "outcome": f"refuses the statement's own example(s) {refused}: not used",
            },
        )
        return None
    return check


MIB = 1024 * 1024


def _generator_runs(ctx: Ctx, cand: Candidate, program: str):
    """``generate(tier, seed)`` for ``materialize``: one run of the generator with its output
    streamed into a temporary file under the data directory (removed afterwards), bounded by
    the test-size limit ``MAX_TEST_BYTES``, not by ``max_output_bytes`` (the cap on a judged
    program's captured output); the input is read back from the file, one test at a time.
    The run's memory gets room for that much output (the sandbox holds it in a memory file
    until the run ends)."""
    limit = settings.MAX_TEST_BYTES
    base = ctx.limits()
    limits = sandbox.Limits(
        time_s=base.time_s,
        memory_mb=base.memory_mb + -(-limit // MIB),
        max_output_bytes=limit,
    )
    scratch = Path(settings.DATA_DIR) / "benchevolver" / "tmp"

    def generate(tier: str, seed: int) -> materialize.GeneratorRun:
        scratch.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(
            prefix=f"generator-k{cand.pk}-{tier}-{seed}-", suffix=".in", dir=scratch
        )
        os.close(handle)
        path = Path(name)
        try:
            outcome = sandbox.run_to_file(
                program,
                "",
                path,
                harness="stdio",
                limits=limits,
                argv=["--tier", tier, "--seed", str(seed)],
            )
            if outcome.status == "SE":
                raise SandboxFailure(
                    f"sandbox failure while running the test generator: {outcome.stderr[-300:]}"
                )
            if outcome.status != "OK":
                return materialize.GeneratorRun(status=outcome.status, stderr=outcome.stderr)
            # Decoded as a captured run's stdout is.
            text = path.read_bytes().decode("utf-8", "replace")
            return materialize.GeneratorRun(status="OK", text=text, stderr=outcome.stderr)
        finally:
            path.unlink(missing_ok=True)

    return generate


def act_materialize(ctx: Ctx, action: Action) -> None:
    cand = action_candidate(action)
    gen = cand.generators
    try:
        check_inputs = _input_checker(ctx, cand, gen.get("examples", []))
        result = materialize.materialize(
            code=cand.code,
            generator=gen["program"],
            examples=gen.get("examples", []),
            harness=cand.harness,
            entry_point=cand.entry_point,
            tier_counts=ctx.tier_counts(),
            limits=ctx.limits(),
            run_batch=execution.run_batch,
            generate=_generator_runs(ctx, cand, gen["program"]),
            max_test_bytes=settings.MAX_TEST_BYTES,
            validate_inputs=check_inputs,
            min_distinct_per_tier=ctx.settings.min_distinct_inputs_per_tier,
            comparison=candidate_comparison(cand),
        )
    except StageError as exc:
        # How far it got (public examples, hidden inputs kept), for the ledger line.
        counts = getattr(exc, "counts", {})
        generator_fault = exc.reason.startswith("test generator")
        if (
            generator_fault
            and ctx.settings.enable_test_repair
            and cand.test_repairs < ctx.settings.test_repair_attempts
        ):
            append_ledger(
                cand,
                {
                    "step": "materialize",
                    "outcome": "generator failed; regenerating",
                    "reason": exc.reason,
                    **counts,
                },
            )
            cand.generators = {**gen, "generator_feedback": exc.reason}
            cand.generators.pop("program", None)
            cand.test_repairs += 1
            move_candidate(
                cand, CandidateStage.PROPOSED, "generators", "validation_ledger", "test_repairs"
            )
            return
        append_ledger(
            cand, {"step": "materialize", "outcome": "invalid", "reason": exc.reason, **counts}
        )
        cand.save(update_fields=["validation_ledger"])
        decide_candidate(ctx, cand, Decision.INVALID, exc.reason)
        return
    if result.invalid_inputs:
        dropped = len(result.invalid_inputs)
        reason = (
            f"{dropped} of {result.generated} generated inputs break the stated constraints "
            f"(first: tier {result.invalid_inputs[0]['tier']} seed "
            f"{result.invalid_inputs[0]['seed']}: {result.invalid_inputs[0]['why']})"
        )
        repair = (
            ctx.settings.enable_test_repair
            and cand.test_repairs < ctx.settings.test_repair_attempts
        )
        append_ledger(
            cand,
            {
                "step": "input validation",
                "outcome": f"{reason}; dropped"
                + ("; regenerating the generator" if repair else "; kept the valid ones"),
                "dropped": dropped,
                "generated": result.generated,
                "invalid": result.invalid_inputs[:5],
            },
        )
        if repair:
            cand.generators = {**gen, "generator_feedback": f"test generator: {reason}"}
            cand.generators.pop("program", None)
            cand.test_repairs += 1
            move_candidate(
                cand, CandidateStage.PROPOSED, "generators", "validation_ledger", "test_repairs"
            )
            return
    body = gen.get("statement_body", cand.statement)
    cand.tests = [t.to_dict() for t in result.all]
    cand.statement = propose.render_statement(
        body, [materialize.example_pair(t) for t in result.public]
    )
    append_ledger(
        cand,
        {
            "step": "materialize",
            "outcome": "ok",
            "public": len(result.public),
            "hidden": len(result.hidden),
            "notes": result.notes,
        },
    )
    move_candidate(cand, CandidateStage.MATERIALIZED, "tests", "statement", "validation_ledger")
