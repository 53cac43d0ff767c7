"""The panel attempt loop, one implementation for BenchEvolver's difficulty stage and for the
measurement of any kind's kept problems: every panel model answers K times (each answer stored
as soon as it arrives, a rerun asks only what is missing or failed), an endpoint whose call for
one attempt keeps failing is named, and the attempts are judged on the tests as one workload.

Where the attempts live differs (BenchEvolver's ``SolverAttempt`` rows of a lineage or a
candidate, the measurement's ``MeasurementAttempt`` rows); ``AttemptRows`` says which rows and
how a new one is created. Both models have ``endpoint``, ``attempt_index``, ``code``,
``verdict``, ``details``, ``passed_tests`` and ``total_tests``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import IntegrityError
from django.db.models import QuerySet
from django.utils import timezone

from evolution.llm import BudgetExhausted, LLMError, mark_unparsable
from evolution.llm.errors import LLMTransportError
from evolution.llm.fanout import fanout_threads, parallel
from evolution.services import execution
from evolution.streams.errors import SandboxFailure

from .difficulty import INFRA_ERROR, answered_attempt


@dataclass
class AttemptRows:
    """``rows`` selects one measurement's attempts; ``create`` holds the fields a new attempt
    gets besides the endpoint, index, code, verdict and details."""

    rows: QuerySet
    create: dict = field(default_factory=dict)

    @property
    def model(self):
        return self.rows.model


def ask_panel(store: AttemptRows, plan: list[tuple], chat: Callable) -> int:
    """Ask every (endpoint, K) of ``plan`` its K attempts through ``chat(endpoint, index)``;
    attempts already answered are skipped. A call that fails for transport or provider reasons
    is stored as an infrastructure error (verdict IE) and asked again next time; it never
    counts in a pass rate. An answer without a program is a failed attempt (NC), its call
    ledgered ``unparsable``. A call budget running out is raised once every call returned.
    Returns how many calls were made."""
    model = store.model
    existing = {
        (a.endpoint_id, a.attempt_index): a
        for a in store.rows.only("id", "endpoint_id", "attempt_index", "verdict", "details")
    }
    jobs = []
    budget_errors: list[BudgetExhausted] = []
    for endpoint, k in plan:
        for index in range(k):
            earlier = existing.get((endpoint.pk, index))
            if earlier is not None and earlier.verdict != INFRA_ERROR:
                continue

            def job(endpoint=endpoint, index=index, earlier=earlier):
                try:
                    answer = chat(endpoint, index)
                except BudgetExhausted as exc:
                    budget_errors.append(exc)
                    return
                except LLMError as exc:
                    _store_infra_error(store, endpoint, index, earlier, exc)
                    return
                code, verdict, details = answered_attempt(
                    answer.content, answer.call_id, earlier.details if earlier else None
                )
                if "parse_error" in details:
                    # A failed attempt (NC), and in the ledger an answer that could not be read.
                    mark_unparsable(answer.call_id, details["parse_error"])
                if earlier is not None:
                    model.objects.filter(pk=earlier.pk, verdict=INFRA_ERROR).update(
                        code=code, verdict=verdict, details=details
                    )
                    return
                with contextlib.suppress(IntegrityError):  # a concurrent rerun stored it first
                    model.objects.create(
                        **store.create,
                        endpoint=endpoint,
                        attempt_index=index,
                        code=code,
                        verdict=verdict,
                        details=details,
                    )

            jobs.append(job)
    # No more threads than the panel can serve at once: each thread holds a DB connection.
    limit = sum(endpoint.concurrency_limit for endpoint, _ in plan)
    parallel(jobs, width=max(1, min(fanout_threads(), limit)))
    if budget_errors:
        raise budget_errors[0]
    return len(jobs)


def _store_infra_error(store: AttemptRows, endpoint, index, earlier, exc: LLMError) -> None:
    entry = {
        "status": exc.status if isinstance(exc, LLMTransportError) else None,
        "message": str(exc)[:500],
        "call_id": exc.call_id,
        "at": timezone.now().isoformat(timespec="seconds"),
    }
    if earlier is not None:
        store.model.objects.filter(pk=earlier.pk, verdict=INFRA_ERROR).update(
            details={
                **earlier.details,
                "infra_errors": [*earlier.details.get("infra_errors", []), entry][-10:],
                "infra_failures": earlier.details.get("infra_failures", 0) + 1,
            }
        )
        return
    with contextlib.suppress(IntegrityError):
        store.model.objects.create(
            **store.create,
            endpoint=endpoint,
            attempt_index=index,
            code="",
            verdict=INFRA_ERROR,
            details={"infra_errors": [entry], "infra_failures": 1},
        )


def infra_error_text(error: dict) -> str:
    """One stored infrastructure error (``{"status", "message"}``) as one phrase, its status
    said once: "HTTP 400: the provider refused the parameter 'temperature'" (a client message
    already starts with its status), "no HTTP answer: timed out"."""
    message = str(error.get("message", "")).strip()
    status = f"HTTP {error['status']}" if error.get("status") else "no HTTP answer"
    if message.startswith(status):
        return message
    return f"{status}: {message}" if message else status


def failing_endpoints(store: AttemptRows, limit: int) -> tuple[list[str], str]:
    """The endpoints whose call for one attempt failed ``limit`` times in a row (down or
    misconfigured), and what the last failure said ("3 failed calls for one attempt; last:
    HTTP 503: ..."); ([], "") when none. Their failure counts restart, so asking again later
    retries them afresh."""
    failing = [
        a
        for a in store.rows.filter(verdict=INFRA_ERROR).select_related("endpoint")
        if a.details.get("infra_failures", 0) >= limit
    ]
    if not failing:
        return [], ""
    last = (failing[0].details.get("infra_errors") or [{}])[-1]
    for attempt in failing:
        store.model.objects.filter(pk=attempt.pk).update(
            details={**attempt.details, "infra_failures": 0}
        )
    return (
        sorted({a.endpoint.name for a in failing}),
        f"{limit} failed calls for one attempt; last: {infra_error_text(last)}",
    )


def judge_attempts(attempts, tests, *, harness, entry_point, limits, comparison=None) -> None:
    """Judge ``attempts`` on ``tests``: one workload for the judge (spread over the sandboxes,
    results in order), each verdict stored as it arrives, so a sandbox failure keeps the ones
    before it. A sandbox failure (SE) raises ``SandboxFailure``: the sandbox's fault, never
    the model's."""
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
        type(attempt).objects.filter(pk=attempt.pk, verdict="").update(
            verdict=result.verdict,
            passed_tests=result.passed,
            total_tests=result.total,
            details={**attempt.details, "tests": [t.verdict for t in result.tests][:50]},
        )
