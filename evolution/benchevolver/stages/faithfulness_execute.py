"""BenchEvolver's ``faithfulness_execute`` stage: the faithfulness answers are judged; a best
pass rate under the floor asks for a statement repair, or, past the repair budget, decides the
candidate invalid; a passing one goes on to the check against its parent."""

from __future__ import annotations

from evolution.benchevolver.engine import validate
from evolution.benchevolver.models import CandidateStage, Decision
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
from .validation import check_against_parent, request_repair_or_reject


def act_faithfulness_execute(ctx: Ctx, action: Action) -> None:
    cand = action_candidate(action)
    tests = [(t["input"], t["output"]) for t in cand.tests]
    answered = [a for a in cand.generators["faithfulness"] if not a.get("infra_error")]
    if not answered:
        # Every solver call failed for transport or provider reasons: ask again, a bounded
        # number of times; an outage is not an underspecified statement.
        gen = dict(cand.generators)
        failed = gen.pop("faithfulness")
        tries = gen.get("faithfulness_infra_retries", 0) + 1
        gen["faithfulness_infra_retries"] = tries
        cand.generators = gen
        if tries >= ctx.settings.infra_retry_limit:
            cand.save(update_fields=["generators"])
            decide_candidate(
                ctx,
                cand,
                Decision.ERROR,
                f"faithfulness solver calls failed {tries} times (infrastructure, not the "
                f"statement): {failed[0]['infra_error'][:300]}",
            )
            return
        cand.save(update_fields=["generators"])
        return
    rates = []
    for answer in answered:
        if not answer.get("code"):
            rates.append(0.0)
            continue
        result = execution.judge(
            answer["code"],
            tests,
            harness=cand.harness,
            limits=ctx.limits(),
            entry_point=cand.entry_point,
            comparison=candidate_comparison(cand),
        )
        if result.verdict == "SE":
            raise SandboxFailure("sandbox failure during the faithfulness check")
        rates.append(result.passed / result.total if result.total else 0.0)
    best = max(rates) if rates else 0.0
    floor = ctx.settings.faithfulness_min_pass_rate
    append_ledger(
        cand,
        {
            "step": "faithfulness",
            "pass_rates": rates,
            "best": best,
            "floor": floor,
            "infrastructure_errors": len(cand.generators["faithfulness"]) - len(answered),
        },
    )
    if validate.faithfulness_passes(best, floor):
        if not check_against_parent(ctx, cand):
            return
        move_candidate(cand, CandidateStage.VALIDATED, "validation_ledger", valid=True)
        return
    if cand.spec_repairs >= ctx.settings.faithfulness_max_repair:
        cand.save(update_fields=["validation_ledger"])
        decide_candidate(
            ctx,
            cand,
            Decision.INVALID,
            f"statement underspecified: best-of-N pass rate {best:.2f} < {floor}",
        )
        return
    request_repair_or_reject(
        ctx,
        cand,
        validate.STATEMENT,
        f"Solutions written from the statement pass at most {best:.0%} of the tests.",
        f"faithfulness best pass rate {best:.2f} below {floor}",
    )
