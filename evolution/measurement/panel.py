"""Asking the panel and judging its attempts: BenchEvolver's panel measurement, for any problem.

Everything that decides a number comes from BenchEvolver and is imported, not copied: the
solver prompt and the answer parsing (``pipeline.difficulty``), the pooling of verdicts with
infrastructure errors apart (``difficulty.pool``), the level map phi, K, the sampling
temperature, the request time-out and the infrastructure retry limit (``EvolutionSettings``'
Table 5 defaults), the judge's door to the sandbox (``services.execution``) and the fan-out of
model calls (``benchevolver.stages.common``: its thread width and runner).
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass

from django.db import IntegrityError
from django.utils import timezone

from evolution import sandbox
from evolution.benchevolver.engine import difficulty
from evolution.benchevolver.engine.config import EvolutionSettings
from evolution.benchevolver.engine.difficulty import INFRA_ERROR
from evolution.benchevolver.stages.common import _parallel, fanout_threads
from evolution.llm import BudgetExhausted, CallContext, LLMClient, LLMError, sampling
from evolution.llm.errors import LLMTransportError
from evolution.models import ModelEndpoint, Problem
from evolution.services import execution
from evolution.streams.errors import SandboxFailure

from .models import Measurement, MeasurementAttempt

# The role and prompt template of a panel attempt: the same as BenchEvolver's, so cassettes
# and call logs read alike.
ROLE = "solver"


def defaults() -> EvolutionSettings:
    """BenchEvolver's defaults (Table 5) for everything a measurement shares with it."""
    return EvolutionSettings()


def is_open_ended(problem: Problem) -> bool:
    """Scored problems (FrontierSmith) have no pass/fail verdict to pool into a pass rate."""
    return (problem.comparison or {}).get("mode") == "score"


def tests_for(problem: Problem) -> list[tuple[str, str]]:
    """The problem's hidden tests (every test when none is hidden), as BenchEvolver judges a
    candidate on its hidden tests."""
    rows = list(problem.tests.order_by("tier", "ordinal"))
    hidden = [t for t in rows if t.hidden]
    return [(t.input, t.output) for t in (hidden or rows)]


def limits_for(problem: Problem):
    return sandbox.Limits(
        time_s=problem.time_limit_s,
        memory_mb=problem.memory_mb,
        max_output_bytes=defaults().max_output_bytes,
    )


def statement_hash(statement: str) -> str:
    return hashlib.sha256(statement.encode("utf-8")).hexdigest()[:16]


def statement_key(problem: Problem) -> str:
    """Replay keys name the statement's hash, not a database id: a replayed demo rebuilt from
    scratch asks the same keys."""
    return statement_hash(problem.statement)


@dataclass
class SolveOutcome:
    asked: int
    failing_endpoints: list[str]  # endpoints whose call for one attempt failed too often
    last_failure: str = ""


def _chat(measurement: Measurement, endpoint: ModelEndpoint, messages, template, index: int):
    s = defaults()
    client = LLMClient(
        sampling.endpoint_for_campaign(endpoint, temperature=s.temperature, timeout=s.timeout),
        CallContext(campaign_id=measurement.campaign_id),
    )
    problem = measurement.problem
    return client.chat(
        messages,
        role=ROLE,
        template=template.name,
        template_version=template.version,
        replay_key=(
            f"measure;statement={statement_key(problem)};model={endpoint.model};attempt={index}"
        ),
    )


def _store_infra_error(measurement, endpoint, index, earlier, exc: LLMError) -> None:
    entry = {
        "status": exc.status if isinstance(exc, LLMTransportError) else None,
        "message": str(exc)[:500],
        "call_id": exc.call_id,
        "at": timezone.now().isoformat(timespec="seconds"),
    }
    if earlier is not None:
        MeasurementAttempt.objects.filter(pk=earlier.pk, verdict=INFRA_ERROR).update(
            details={
                **earlier.details,
                "infra_errors": [*earlier.details.get("infra_errors", []), entry][-10:],
                "infra_failures": earlier.details.get("infra_failures", 0) + 1,
            }
        )
        return
    with contextlib.suppress(IntegrityError):
        MeasurementAttempt.objects.create(
            measurement=measurement,
            endpoint=endpoint,
            attempt_index=index,
            verdict=INFRA_ERROR,
            details={"infra_errors": [entry], "infra_failures": 1},
        )


def solve(measurement: Measurement) -> SolveOutcome:
    """Ask every panel model its K attempts from the statement alone; each answer is stored as
    soon as it arrives (a rerun asks only what is missing or failed).

    A call that fails for transport or provider reasons is stored as an infrastructure error
    (verdict IE) and asked again on the next call of ``solve``; it never counts in a pass rate.
    An attempt whose call failed ``infra_retry_limit`` times names its endpoint in
    ``failing_endpoints`` (its failure count restarts, so asking again later retries it)."""
    problem = measurement.problem
    existing = {(a.endpoint_id, a.attempt_index): a for a in measurement.runs.all()}
    messages, template = difficulty.solver_messages(
        statement=problem.statement,
        harness=problem.harness,
        entry_point=problem.entry_point,
        starter_code=problem.starter_code,
    )
    endpoints = ModelEndpoint.objects.in_bulk([eid for eid, _ in measurement.plan])
    jobs = []
    budget_errors: list[BudgetExhausted] = []
    for endpoint_id, k in measurement.plan:
        endpoint = endpoints[endpoint_id]
        for index in range(k):
            earlier = existing.get((endpoint_id, index))
            if earlier is not None and earlier.verdict != INFRA_ERROR:
                continue

            def job(endpoint=endpoint, index=index, earlier=earlier):
                try:
                    answer = _chat(measurement, endpoint, messages, template, index)
                except BudgetExhausted as exc:
                    budget_errors.append(exc)
                    return
                except LLMError as exc:
                    _store_infra_error(measurement, endpoint, index, earlier, exc)
                    return
                code, verdict, details = difficulty.answered_attempt(
                    answer.content, answer.call_id, earlier.details if earlier else None
                )
                if earlier is not None:
                    MeasurementAttempt.objects.filter(pk=earlier.pk, verdict=INFRA_ERROR).update(
                        code=code, verdict=verdict, details=details
                    )
                    return
                with contextlib.suppress(IntegrityError):  # a concurrent rerun stored it first
                    MeasurementAttempt.objects.create(
                        measurement=measurement,
                        endpoint=endpoint,
                        attempt_index=index,
                        code=code,
                        verdict=verdict,
                        details=details,
                    )

            jobs.append(job)
    # No more threads than the panel can serve at once: each thread holds a DB connection.
    limit = sum(e.concurrency_limit for e in endpoints.values())
    _parallel(jobs, width=max(1, min(fanout_threads(), limit)))
    if budget_errors:
        raise budget_errors[0]
    return _failing(measurement, asked=len(jobs))


def _failing(measurement: Measurement, *, asked: int) -> SolveOutcome:
    limit = defaults().infra_retry_limit
    failing = [
        a
        for a in measurement.runs.filter(verdict=INFRA_ERROR).select_related("endpoint")
        if a.details.get("infra_failures", 0) >= limit
    ]
    if not failing:
        return SolveOutcome(asked=asked, failing_endpoints=[])
    last = (failing[0].details.get("infra_errors") or [{}])[-1]
    status = f"HTTP {last['status']}" if last.get("status") else "no HTTP answer"
    for attempt in failing:
        MeasurementAttempt.objects.filter(pk=attempt.pk).update(
            details={**attempt.details, "infra_failures": 0}
        )
    return SolveOutcome(
        asked=asked,
        failing_endpoints=sorted({a.endpoint.name for a in failing}),
        last_failure=f"{limit} failed calls for one attempt; last: {status}: "
        f"{last.get('message', '')}",
    )


def judge(measurement: Measurement) -> int:
    """Judge every unjudged attempt on the problem's tests (one workload for the sandboxes);
    each verdict is stored as it arrives. A sandbox failure (SE) raises ``SandboxFailure``:
    the sandbox's fault, never the model's. Returns how many were judged."""
    problem = measurement.problem
    pending = list(measurement.runs.filter(verdict=""))
    if not pending:
        return 0
    results = execution.judge_many(
        [a.code for a in pending],
        tests_for(problem),
        harness=problem.harness,
        entry_point=problem.entry_point,
        limits=limits_for(problem),
        comparison=problem.comparison or {},
        stop_on_first_failure=True,
    )
    for attempt, result in zip(pending, results, strict=True):
        if isinstance(result, ValueError):
            raise result
        if result.verdict == "SE":
            raise SandboxFailure(
                f"sandbox failure while judging: {result.compile_error or result.to_dict()}"
            )
        MeasurementAttempt.objects.filter(pk=attempt.pk, verdict="").update(
            verdict=result.verdict,
            passed_tests=result.passed,
            total_tests=result.total,
            details={**attempt.details, "tests": [t.verdict for t in result.tests][:50]},
        )
    return len(pending)


def pooled(measurement: Measurement) -> difficulty.PanelResult:
    return difficulty.pool(
        [(a.endpoint.name, a.verdict) for a in measurement.runs.select_related("endpoint")]
    )
