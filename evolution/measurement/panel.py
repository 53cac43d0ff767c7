"""Asking the panel and judging its attempts: BenchEvolver's panel measurement, for any problem.

Everything that decides a number is shared, not copied: the solver prompt, the answer parsing,
the pooling of verdicts with infrastructure errors apart and the attempt loop itself (asking,
storing, naming a failing endpoint, judging) are the platform's (``evolution.judging``, the
same code BenchEvolver's difficulty stage runs); the level map phi, K, the sampling
temperature, the request time-out and the infrastructure retry limit are the platform's panel
defaults (``evolution.judging.difficulty.PANEL_DEFAULTS``, Table 5), which BenchEvolver's
settings default to as well.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from evolution import sandbox
from evolution.judging import attempts, difficulty
from evolution.judging.attempts import AttemptRows
from evolution.llm import CallContext, LLMClient, sampling
from evolution.models import ModelEndpoint, Problem

from .models import Measurement

# The role and prompt template of a panel attempt: the same as BenchEvolver's, so cassettes
# and call logs read alike.
ROLE = "solver"


def defaults() -> difficulty.PanelDefaults:
    """The platform's panel defaults (Table 5), which BenchEvolver's settings share."""
    return difficulty.PANEL_DEFAULTS


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


def _attempt_rows(measurement: Measurement) -> AttemptRows:
    return AttemptRows(rows=measurement.runs.all(), create={"measurement": measurement})


def solve(measurement: Measurement) -> SolveOutcome:
    """Ask every panel model its K attempts from the statement alone through the platform's
    attempt loop (``evolution.judging.attempts``, the one BenchEvolver's difficulty stage uses);
    each answer is stored as soon as it arrives (a rerun asks only what is missing or failed).

    A call that fails for transport or provider reasons is stored as an infrastructure error
    (verdict IE) and asked again on the next call of ``solve``; it never counts in a pass rate.
    An attempt whose call failed ``infra_retry_limit`` times names its endpoint in
    ``failing_endpoints`` (its failure count restarts, so asking again later retries it)."""
    problem = measurement.problem
    messages, template = difficulty.solver_messages(
        statement=problem.statement,
        harness=problem.harness,
        entry_point=problem.entry_point,
        starter_code=problem.starter_code,
    )
    endpoints = ModelEndpoint.objects.in_bulk([eid for eid, _ in measurement.plan])
    plan = [(endpoints[endpoint_id], k) for endpoint_id, k in measurement.plan]
    store = _attempt_rows(measurement)
    asked = attempts.ask_panel(
        store,
        plan,
        lambda endpoint, index: _chat(measurement, endpoint, messages, template, index),
    )
    names, detail = attempts.failing_endpoints(store, defaults().infra_retry_limit)
    return SolveOutcome(asked=asked, failing_endpoints=names, last_failure=detail)


def judge(measurement: Measurement) -> int:
    """Judge every unjudged attempt on the problem's tests (one workload for the sandboxes);
    each verdict is stored as it arrives. A sandbox failure (SE) raises ``SandboxFailure``:
    the sandbox's fault, never the model's. Returns how many were judged."""
    problem = measurement.problem
    pending = list(measurement.runs.filter(verdict=""))
    if not pending:
        return 0
    attempts.judge_attempts(
        pending,
        tests_for(problem),
        harness=problem.harness,
        entry_point=problem.entry_point,
        limits=limits_for(problem),
        comparison=problem.comparison or {},
    )
    return len(pending)


def pooled(measurement: Measurement) -> difficulty.PanelResult:
    return difficulty.pool(
        [(a.endpoint.name, a.verdict) for a in measurement.runs.select_related("endpoint")]
    )
