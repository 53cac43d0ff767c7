"""Difficulty measurement (stages ``measure_solve``, ``measure_judge``; pure logic in
``engine/difficulty.py``): every panel model answers K times, each answer stored as it arrives,
then the attempts are judged on the hidden tests and the candidate's level is set."""

from __future__ import annotations

import contextlib

from django.db import IntegrityError
from django.utils import timezone

from evolution.benchevolver.engine import difficulty
from evolution.llm import BudgetExhausted, LLMError
from evolution.llm.errors import LLMTransportError
from evolution.models import Candidate, ModelEndpoint, SolverAttempt
from evolution.models.campaigns import Stage
from evolution.services import campaigns as campaign_services
from evolution.services import execution
from evolution.streams.errors import SandboxFailure

from .common import (
    INFRA_ERROR,
    Action,
    Ctx,
    _candidate_or_none,
    _candidate_starter,
    _comparison,
    _parallel,
    fanout_threads,
)


def planned_attempts(ctx: Ctx, candidate: Candidate | None = None) -> int:
    """How many panel attempts a measurement needs: K per member (plus a candidate's extra
    attempts when its level gain needed more evidence)."""
    return sum(k for _, k in panel_plan(ctx, candidate))


def panel_plan(ctx: Ctx, candidate: Candidate | None = None) -> list[tuple[ModelEndpoint, int]]:
    """(endpoint, K) per panel member: the member's own ``attempts``, else ``target_eval_k``,
    plus the candidate's ``panel_extra`` attempts, never past ``max_panel_attempts``."""
    k = ctx.settings.target_eval_k
    extra = (candidate.generators or {}).get("panel_extra", 0) if candidate else 0
    plan = []
    for m in ctx.campaign.panel.members.select_related("endpoint"):
        own = m.k(k)
        plan.append((m.endpoint, max(own, min(own + extra, ctx.settings.max_panel_attempts))))
    return plan


def _solve_attempts(
    ctx: Ctx,
    *,
    candidate: Candidate | None,
    statement: str,
    harness: str,
    entry_point: str,
    starter_code: str = "",
):
    """Ask every panel model K times; each answer is stored as soon as it arrives.

    A call that fails for transport or provider reasons (HTTP 400/401/5xx, time-out after the
    client's retries, a missing key) is stored as an infrastructure error (verdict IE, with the
    status and message) and asked again on the next step; it never counts in a pass rate. When
    one attempt has failed so ``infra_retry_limit`` times, the campaign pauses naming the
    endpoint."""
    attempts = SolverAttempt.objects.filter(lineage=ctx.lineage, candidate=candidate)
    existing = {
        (a.endpoint_id, a.attempt_index): a
        for a in attempts.only("id", "endpoint_id", "attempt_index", "verdict", "details")
    }
    messages, template = difficulty.solver_messages(
        statement=statement, harness=harness, entry_point=entry_point, starter_code=starter_code
    )
    round_key = f"round={candidate.round}" if candidate else "round=0"
    jobs = []
    budget_errors: list[BudgetExhausted] = []
    plan = panel_plan(ctx, candidate)
    for endpoint, k in plan:
        for index in range(k):
            earlier = existing.get((endpoint.pk, index))
            if earlier is not None and earlier.verdict != INFRA_ERROR:
                continue

            def job(endpoint=endpoint, index=index, earlier=earlier):
                try:
                    answer = ctx.chat(
                        "solver",
                        messages,
                        template,
                        key=f"{round_key};model={endpoint.model};attempt={index}",
                        candidate=candidate,
                        endpoint=endpoint,
                    )
                except BudgetExhausted as exc:
                    budget_errors.append(exc)
                    return
                except LLMError as exc:
                    _store_infra_error(ctx, candidate, endpoint, index, earlier, exc)
                    return
                code, verdict, details = difficulty.answered_attempt(
                    answer.content, answer.call_id, earlier.details if earlier else None
                )
                if earlier is not None:
                    SolverAttempt.objects.filter(pk=earlier.pk, verdict=INFRA_ERROR).update(
                        code=code, verdict=verdict, details=details
                    )
                    return
                # A concurrent rerun may have stored this attempt first.
                with contextlib.suppress(IntegrityError):
                    SolverAttempt.objects.create(
                        lineage=ctx.lineage,
                        candidate=candidate,
                        endpoint=endpoint,
                        attempt_index=index,
                        code=code,
                        verdict=verdict,
                        details=details,
                    )

            jobs.append(job)
    # No more threads than the panel can serve at once: each thread holds a DB connection.
    limit = sum(endpoint.concurrency_limit for endpoint, _ in plan)
    _parallel(jobs, width=max(1, min(fanout_threads(), limit)))
    if budget_errors:
        raise budget_errors[0]
    _pause_if_endpoint_keeps_failing(ctx, candidate)


def _store_infra_error(ctx, candidate, endpoint, index, earlier, exc: LLMError) -> None:
    status = exc.status if isinstance(exc, LLMTransportError) else None
    entry = {
        "status": status,
        "message": str(exc)[:500],
        "call_id": exc.call_id,
        "at": timezone.now().isoformat(timespec="seconds"),
    }
    if earlier is not None:
        history = [*earlier.details.get("infra_errors", []), entry][-10:]
        failures = earlier.details.get("infra_failures", 0) + 1
        SolverAttempt.objects.filter(pk=earlier.pk, verdict=INFRA_ERROR).update(
            details={**earlier.details, "infra_errors": history, "infra_failures": failures}
        )
        return
    with contextlib.suppress(IntegrityError):
        SolverAttempt.objects.create(
            lineage=ctx.lineage,
            candidate=candidate,
            endpoint=endpoint,
            attempt_index=index,
            code="",
            verdict=INFRA_ERROR,
            details={"infra_errors": [entry], "infra_failures": 1},
        )


def _pause_if_endpoint_keeps_failing(ctx: Ctx, candidate: Candidate | None) -> None:
    """An endpoint whose call for one attempt failed ``infra_retry_limit`` times in a row is
    down or misconfigured: pause the campaign with a reason naming it (measuring on would
    only burn budget). Resuming retries those attempts afresh."""
    limit = ctx.settings.infra_retry_limit
    failing = [
        a
        for a in SolverAttempt.objects.filter(
            lineage=ctx.lineage, candidate=candidate, verdict=INFRA_ERROR
        ).select_related("endpoint")
        if a.details.get("infra_failures", 0) >= limit
    ]
    if not failing:
        return
    worst = failing[0]
    last = (worst.details.get("infra_errors") or [{}])[-1]
    status = f"HTTP {last['status']}" if last.get("status") else "no HTTP answer"
    names = sorted({a.endpoint.name for a in failing})
    reason = (
        f"panel endpoint {', '.join(repr(n) for n in names)} keeps failing "
        f"({limit} failed calls for one attempt; last: {status}: {last.get('message', '')})"
    )
    for attempt in failing:
        SolverAttempt.objects.filter(pk=attempt.pk).update(
            details={**attempt.details, "infra_failures": 0}
        )
    with contextlib.suppress(campaign_services.TransitionError):
        campaign_services.campaign_pause(campaign_id=ctx.campaign.pk, reason=reason[:300])


def _judge_attempts(
    ctx: Ctx, attempts, *, tests, harness, entry_point, limits, comparison=None
) -> None:
    # The panel's attempts are one workload for the judge (spread over the sandboxes, results
    # in order); each is stored as it arrives, so a sandbox failure keeps the ones before it.
    results = execution.judge_many(
        [attempt.code for attempt in attempts],
        tests,
        harness=harness,
        entry_point=entry_point,
        limits=limits,
        comparison=comparison or {},
        stop_on_first_failure=True,
    )
    for attempt, result in zip(attempts, results, strict=True):
        if isinstance(result, ValueError):
            raise result
        if result.verdict == "SE":
            raise SandboxFailure(
                f"sandbox failure while judging: {result.compile_error or result.to_dict()}"
            )
        SolverAttempt.objects.filter(pk=attempt.pk, verdict="").update(
            verdict=result.verdict,
            passed_tests=result.passed,
            total_tests=result.total,
            details={**attempt.details, "tests": [t.verdict for t in result.tests][:50]},
        )


def act_measure_solve(ctx: Ctx, action: Action) -> None:
    cand = _candidate_or_none(action)
    _solve_attempts(
        ctx,
        candidate=cand,
        statement=cand.statement,
        harness=cand.harness,
        entry_point=cand.entry_point,
        starter_code=_candidate_starter(ctx, cand),
    )


def act_measure_judge(ctx: Ctx, action: Action) -> None:
    cand = _candidate_or_none(action)
    pending = list(cand.solver_attempts.filter(verdict=""))
    tests = [(t["input"], t["output"]) for t in cand.tests if t["hidden"]] or [
        (t["input"], t["output"]) for t in cand.tests
    ]
    _judge_attempts(
        ctx,
        pending,
        tests=tests,
        harness=cand.harness,
        entry_point=cand.entry_point,
        limits=ctx.limits(),
        comparison=_comparison(cand),
    )
    attempts = list(cand.solver_attempts.select_related("endpoint"))
    if any(a.verdict == "" for a in attempts):
        return
    panel = difficulty.pool([(a.endpoint.name, a.verdict) for a in attempts])
    cand.passes, cand.attempts = panel.passes, panel.attempts
    cand.level = ctx.settings.level(panel.pass_rate)
    cand.panel_results = panel.per_model
    cand.error_pattern = panel.error_pattern
    cand.stage = Stage.MEASURED
    cand.save(
        update_fields=["passes", "attempts", "level", "panel_results", "error_pattern", "stage"]
    )
