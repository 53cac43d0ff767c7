"""The lineage step machine: Algorithm 1 of BenchEvolver as durable state transitions.

Every call of ``lineage_advance`` claims one lineage with a conditional UPDATE (a lease), works
out the next action from the rows alone, performs it, and stores the result. A worker killed at
any instant loses at most the action in flight: model answers and verdicts are written as they
arrive, and unique constraints make a rerun skip what exists, so no candidate, solver attempt or
accepted problem is ever duplicated.

Actions are either model-bound (queue ``default``) or execution-bound (queue ``sandbox``), so the
judge capacity scales on separate workers: a mixed stage is split into a model phase that stores
the answers and an execution phase that judges them.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.conf import settings as django_settings
from django.db import (
    IntegrityError,
    close_old_connections,
    connections,
    transaction,
)
from django.utils import timezone

from evolution.llm import BudgetExhausted, CallContext, LLMClient, LLMError, sampling
from evolution.llm.errors import LLMTransportError
from evolution.models import (
    Campaign,
    Candidate,
    GlobalMemoryEntry,
    Lineage,
    ModelEndpoint,
    Problem,
    SolverAttempt,
    TestCase,
)
from evolution.models.campaigns import Decision, LineageState, Stage
from evolution.models.problems import ProblemKind
from evolution.pipeline import (
    accept,
    difficulty,
    judge,
    materialize,
    memory,
    prompts,
    propose,
    validate,
)
from evolution.pipeline.config import EvolutionSettings
from evolution.pipeline.types import GeneratedTest, StageError
from evolution.sandbox import contracts
from evolution.streams import runner
from evolution.streams.errors import SandboxFailure
from evolution.streams.runner import StepReport

from . import campaigns as campaign_services
from . import execution

log = logging.getLogger(__name__)

DEFAULT = "default"
SANDBOX = "sandbox"
ANY = "any"
# Verdict of a panel attempt whose model call failed for transport or provider reasons: it is
# retried, and never counted in a pass rate (an outage is not difficulty).
INFRA_ERROR = "IE"

# Roles whose model is the campaign's evolver unless role_endpoints names another endpoint.
EVOLVER_ROLES = (
    "mutator",
    "writer",
    "test_generator",
    "brute_force",
    "oracle",
    "repair",
    "faithfulness",
    "judge",
)


@dataclass(frozen=True)
class Action:
    name: str
    queue: str
    candidate_id: int | None = None


@dataclass
class Ctx:
    campaign: Campaign
    lineage: Lineage
    settings: EvolutionSettings

    def __post_init__(self):
        # One campaign, two columns of Table 5: function-level lineages run with SciCode's.
        self.settings = self.settings.for_harness(self.lineage.seed.harness)

    @property
    def seed(self) -> Problem:
        return self.lineage.seed

    def seed_key(self) -> str:
        return self.seed.origin_id or self.seed.public_id

    def endpoint_for(self, role: str) -> ModelEndpoint:
        override = (self.campaign.role_endpoints or {}).get(role)
        if override:
            return ModelEndpoint.objects.get(pk=override)
        return self.campaign.evolver

    def chat(
        self,
        role: str,
        messages: list[dict],
        template,
        *,
        key: str,
        candidate: Candidate | None = None,
        endpoint: ModelEndpoint | None = None,
        temperature: float | None = None,
    ):
        client = LLMClient(
            sampling.endpoint_for_campaign(
                endpoint or self.endpoint_for(role),
                temperature=self.settings.temperature,
                timeout=self.settings.timeout,
            ),
            CallContext(
                campaign_id=self.campaign.pk,
                lineage_id=self.lineage.pk,
                candidate_id=candidate.pk if candidate else None,
            ),
        )
        return client.chat(
            messages,
            role=role,
            template=template.name,
            template_version=template.version,
            replay_key=f"seed={self.seed_key()};{key};role={role}",
            temperature=temperature,
        )

    def limits(self, time_s: float | None = None):
        return execution.limits_for(self.settings, time_s=time_s)


# --------------------------------------------------------------------------- one step


def lineage_advance(
    *, lineage_id: int, ticket: str | None = None, queue: str | None = None
) -> StepReport:
    """Advance one lineage by one action through the shared runner (claim, next action, stage,
    release, failure policy: evolution.streams.runner). ``queue`` is the queue this worker
    serves (None: any, and nothing is scheduled); ``ticket`` None skips the ticket check."""
    return runner.advance(
        kind="benchevolver",
        stream_id=lineage_id,
        ticket=ticket,
        queue=queue,
        schedule=queue is not None,
    )


# --------------------------------------------------------------------------- what next


def open_candidate(lineage: Lineage) -> Candidate | None:
    return lineage.candidates.filter(decision="").order_by("-round").first()


def next_action(ctx: Ctx) -> Action:
    lineage = ctx.lineage
    if lineage.state == LineageState.PENDING:
        if (ctx.seed.comparison or {}).get("mode") == "score":
            return Action("skip_scored_seed", ANY)
        if no_reference_reason(ctx):
            return Action("skip_without_reference", ANY)
        attempts = SolverAttempt.objects.filter(lineage=lineage, candidate__isnull=True)
        if attempts.exclude(verdict=INFRA_ERROR).count() < planned_attempts(ctx):
            return Action("calibrate_solve", DEFAULT)
        if attempts.filter(verdict="").exists():
            return Action("calibrate_judge", SANDBOX)
        return Action("calibrate_finish", ANY)
    cand = open_candidate(lineage)
    if cand is None:
        return Action("propose", DEFAULT)
    c = cand.pk
    if cand.stage == Stage.PROPOSED:
        return Action("write_tests", DEFAULT, c)
    if cand.stage == Stage.GENERATED:
        return Action("materialize", SANDBOX, c)
    if cand.stage == Stage.MATERIALIZED:
        gen = cand.generators
        if gen.get("pending_repair"):
            return Action("repair", DEFAULT, c)
        if cand.harness == "stdio":
            if "brute_force" not in gen or "oracle_outputs" not in gen:
                return Action("validate_witnesses", DEFAULT, c)
            return Action("validate_execute", SANDBOX, c)
        if "faithfulness" not in gen:
            return Action("faithfulness_solve", DEFAULT, c)
        return Action("faithfulness_execute", SANDBOX, c)
    if cand.stage == Stage.VALIDATED:
        attempts = cand.solver_attempts.exclude(verdict=INFRA_ERROR)
        if attempts.count() < planned_attempts(ctx, cand):
            return Action("measure_solve", DEFAULT, c)
        return Action("measure_judge", SANDBOX, c)
    if cand.stage == Stage.MEASURED:
        return Action("judge", DEFAULT, c)
    return Action("decide", ANY, c)


def no_reference_reason(ctx: Ctx) -> str:
    """Why the seed can never get a reference solution in this campaign ("" when it can): it
    has none, and either calibration may not supply one or there are no tests to prove it."""
    seed = ctx.seed
    if seed.reference_solution.strip():
        return ""
    if not ctx.settings.reference_from_calibration:
        return (
            "the seed has no reference solution and reference_from_calibration is off "
            "(give one in a solutions file at import)"
        )
    if not seed.tests.exists():
        return (
            "the seed has no reference solution and no tests a calibration attempt could "
            "pass to become one"
        )
    return ""


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


# --------------------------------------------------------------------------- helpers


def fanout_threads() -> int:
    """Threads one step may use for model calls; each holds a database connection, so
    workers x concurrency x this must stay well below PostgreSQL's max_connections."""
    return int(getattr(django_settings, "ENGINE_FANOUT_THREADS", 8))


def _parallel(jobs: list[Callable[[], None]], width: int) -> None:
    """Run model calls side by side (each thread uses its own DB connection, closed after)."""

    def wrap(job):
        try:
            return job()
        finally:
            connections.close_all()

    if len(jobs) <= 1 or width <= 1:
        for job in jobs:
            job()
        return
    with ThreadPoolExecutor(max_workers=min(width, len(jobs))) as pool:
        for future in [pool.submit(wrap, job) for job in jobs]:
            future.result()
    close_old_connections()


def _seed_tests(problem: Problem) -> list[tuple[str, str]]:
    return [(t.input, t.output) for t in problem.tests.order_by("tier", "ordinal")]


def _candidate_tests(cand: Candidate, *, hidden_only: bool = False) -> list[dict]:
    return [t for t in cand.tests if t.get("hidden") or not hidden_only]


def _judge_code(
    code: str,
    tests: list[tuple[str, str]],
    *,
    harness: str,
    entry_point: str,
    limits,
    comparison=None,
):
    result = execution.judge(
        code,
        tests,
        harness=harness,
        limits=limits,
        entry_point=entry_point,
        comparison=comparison or {},
        stop_on_first_failure=True,
    )
    if result.verdict == "SE":
        raise SandboxFailure(
            f"sandbox failure while judging: {result.compile_error or result.to_dict()}"
        )
    return result


def _ledger(cand: Candidate, entry: dict) -> None:
    entry = {"at": timezone.now().isoformat(timespec="seconds"), **entry}
    cand.validation_ledger = [*cand.validation_ledger, entry]


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
                code, problem = difficulty.solver_code(answer.content)
                details = {"call_id": answer.call_id}
                if earlier is not None:
                    details["infra_errors"] = earlier.details.get("infra_errors", [])
                if problem:
                    details["parse_error"] = problem
                # No code (an answer without a code block) is a failed attempt: judged "NC".
                verdict = "" if code else "NC"
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


# --------------------------------------------------------------------------- seed calibration


def act_calibrate_solve(ctx: Ctx, action: Action) -> None:
    seed = ctx.seed
    _solve_attempts(
        ctx,
        candidate=None,
        statement=seed.statement,
        harness=seed.harness,
        entry_point=seed.entry_point,
        starter_code=seed.starter_code,
    )


def act_calibrate_judge(ctx: Ctx, action: Action) -> None:
    seed = ctx.seed
    pending = list(
        SolverAttempt.objects.filter(lineage=ctx.lineage, candidate__isnull=True, verdict="")
    )
    _judge_attempts(
        ctx,
        pending,
        tests=_seed_tests(seed),
        harness=seed.harness,
        entry_point=seed.entry_point,
        limits=ctx.limits(seed.time_limit_s),
        comparison=seed.comparison,
    )


def act_skip_scored_seed(ctx: Ctx, action: Action) -> None:
    """Open-ended (scored) problems have no pass/fail tests to calibrate or evolve against."""
    Lineage.objects.filter(pk=ctx.lineage.pk, state=LineageState.PENDING).update(
        state=LineageState.SKIPPED,
        stop_reason="open-ended seed (scored by a verifier): BenchEvolver needs pass/fail tests",
    )


def act_skip_without_reference(ctx: Ctx, action: Action) -> None:
    """Skipped before any model is called: nothing could ever give this seed a reference."""
    Lineage.objects.filter(pk=ctx.lineage.pk, state=LineageState.PENDING).update(
        state=LineageState.SKIPPED, stop_reason=no_reference_reason(ctx)[:300]
    )


def _adopt_calibration_reference(ctx: Ctx, attempts: list[SolverAttempt]) -> bool:
    """Give a seed without a reference the first calibration attempt that passed every public
    and private test (a calibration attempt is judged on all of the seed's tests), with its
    provenance. Returns whether the seed now has a reference."""
    seed = ctx.seed
    if seed.reference_solution.strip():
        return True
    if not ctx.settings.reference_from_calibration:
        return False
    passed = sorted(
        (a for a in attempts if a.verdict == "AC" and a.code.strip()),
        key=lambda a: (a.endpoint.name, a.attempt_index),
    )
    if not passed:
        return False
    chosen = passed[0]
    provenance = {
        "source": "calibration",
        "campaign": ctx.campaign.pk,
        "lineage": ctx.lineage.pk,
        "endpoint": chosen.endpoint.name,
        "model": chosen.endpoint.model,
        "attempt": chosen.attempt_index,
        "solver_attempt": chosen.pk,
        "tests_passed": f"{chosen.passed_tests}/{chosen.total_tests}",
    }
    # Conditional: a reference given meanwhile (another campaign, a re-import) is kept.
    with transaction.atomic():
        locked = Problem.objects.select_for_update().get(pk=seed.pk)
        if not locked.reference_solution.strip():
            locked.reference_solution = chosen.code
            locked.metadata = {**(locked.metadata or {}), "reference_provenance": provenance}
            locked.save(update_fields=["reference_solution", "metadata", "updated_at"])
    seed.refresh_from_db()
    return bool(seed.reference_solution.strip())


def act_calibrate_finish(ctx: Ctx, action: Action) -> None:
    attempts = list(
        SolverAttempt.objects.filter(lineage=ctx.lineage, candidate__isnull=True).select_related(
            "endpoint"
        )
    )
    has_reference = _adopt_calibration_reference(ctx, attempts)
    panel = difficulty.pool([(a.endpoint.name, a.verdict) for a in attempts])
    level = ctx.settings.level(panel.pass_rate)
    updates = {
        "seed_passes": panel.passes,
        "seed_attempts": panel.attempts,
        "seed_level": level,
        "parent_level": level,
        "best_level": level,
        "parent": ctx.seed,
    }
    if level not in ctx.settings.allowed_seed_levels:
        updates.update(
            state=LineageState.SKIPPED,
            stop_reason=f"seed level {level} (pass rate {panel.pass_rate:.2f}) is outside allowed_seed_levels "
            f"{ctx.settings.allowed_seed_levels}",
        )
    elif not has_reference:
        updates.update(
            state=LineageState.SKIPPED,
            stop_reason="the seed has no reference solution and no calibration attempt passed "
            "every public and private test",
        )
    else:
        updates["state"] = LineageState.EVOLVING
    Lineage.objects.filter(pk=ctx.lineage.pk, state=LineageState.PENDING).update(**updates)


# --------------------------------------------------------------------------- proposer


def _memory_texts(ctx: Ctx) -> tuple[str, str]:
    local = memory.digest_text(ctx.lineage.memory, recent_k=ctx.settings.memory_digest_recent_k)
    others = GlobalMemoryEntry.objects.filter(campaign=ctx.campaign).exclude(
        candidate__lineage=ctx.lineage
    )
    entries = list(
        others.filter(accepted=True)
        .order_by("created_at")
        .values_list("family", "summary", "level_gain")
    )
    attempted = list(
        others.filter(accepted=False).order_by("created_at").values_list("family", "decision")
    )
    glob = memory.global_text(
        entries,
        max_entries=ctx.settings.global_memory_max_entries,
        max_chars=ctx.settings.global_memory_max_chars,
        attempted=attempted,
    )
    return local, glob


def act_propose(ctx: Ctx, action: Action) -> None:
    lineage = ctx.lineage
    stop = accept.stop_reason(
        iterations=lineage.iterations,
        accepted=lineage.accepted_count,
        no_improve=lineage.no_improve,
        best_level=lineage.best_level if lineage.accepted_count else None,
        settings=ctx.settings,
    )
    if stop:
        Lineage.objects.filter(pk=lineage.pk).update(state=LineageState.DONE, stop_reason=stop)
        return
    parent = lineage.parent or ctx.seed
    round_no = lineage.candidates.count() + 1
    harness = "stdio" if ctx.seed.harness == "stdio" else "function"
    entry_point = "" if harness == "stdio" else ctx.seed.entry_point
    local, glob = _memory_texts(ctx)
    record = {
        "round": round_no,
        "parent": parent.pk,
        "memory_context": f"## Lineage memory\n{local or '(empty)'}\n\n## Global memory\n{glob or '(empty)'}",
    }
    try:
        messages, template = propose.mutator_messages(
            parent_code=parent.reference_solution,
            harness=harness,
            entry_point=entry_point,
            parent_level=lineage.parent_level or 1,
            seed_level=lineage.seed_level or 1,
            lineage_memory=local,
            global_memory=glob,
            starter_code=parent.starter_code,
        )
        answer = ctx.chat("mutator", messages, template, key=f"round={round_no}")
        mutation = propose.parse_mutation(answer.content)
        record.update(code=mutation.code, idea=mutation.idea, family=mutation.family)
        messages, template = propose.writer_messages(
            code=mutation.code,
            harness=harness,
            entry_point=entry_point,
            time_limit=ctx.settings.execution_timeout,
        )
        answer = ctx.chat("writer", messages, template, key=f"round={round_no}")
        written = propose.parse_written(answer.content)
    except (StageError, LLMError) as exc:
        if isinstance(exc, BudgetExhausted):
            raise
        reason = exc.reason if isinstance(exc, StageError) else f"model call failed: {exc}"
        cand = _create_candidate(ctx, round_no, parent, harness, entry_point, record)
        if cand is not None:
            _decide(ctx, cand, Decision.ERROR, reason)
        return
    if harness != "stdio" and written.entry_point:
        entry_point = written.entry_point
    record.update(
        title=written.title,
        statement=written.statement,
        generators={
            "statement_body": written.statement,
            "examples": written.examples,
            # Function-level answers are JSON values: token layout never matters there.
            "contract": written.contract
            if harness == "stdio" or written.contract["kind"] not in ("tokens", "checker")
            else {"kind": "exact"},
        },
        parent_weakness=mutation.parent_weakness,
        code_diff=propose.code_diff(parent.reference_solution, mutation.code),
    )
    _create_candidate(ctx, round_no, parent, harness, entry_point, record)


def _create_candidate(ctx, round_no, parent, harness, entry_point, record) -> Candidate | None:
    try:
        with transaction.atomic():
            return Candidate.objects.create(
                lineage=ctx.lineage,
                round=round_no,
                parent=parent,
                harness=harness,
                entry_point=entry_point,
                stage=Stage.PROPOSED,
                code=record.get("code", ""),
                idea=record.get("idea", ""),
                family=record.get("family", ""),
                title=record.get("title", ""),
                statement=record.get("statement", ""),
                generators=record.get("generators", {}),
                parent_weakness=record.get("parent_weakness", ""),
                code_diff=record.get("code_diff", ""),
                memory_context=record["memory_context"],
            )
    except IntegrityError:
        return None  # this round exists already: a rerun after a crash


def _candidate_or_none(action: Action) -> Candidate:
    return Candidate.objects.select_related("parent").get(pk=action.candidate_id)


def act_write_tests(ctx: Ctx, action: Action) -> None:
    cand = _candidate_or_none(action)
    tiers = list(ctx.settings.tier_counts(cand.harness))
    messages, template = materialize.generator_messages(
        statement=cand.generators.get("statement_body", cand.statement),
        code=cand.code,
        harness=cand.harness,
        tiers=tiers,
    )
    feedback = cand.generators.get("generator_feedback")
    if feedback:
        messages.append(
            {"role": "user", "content": f"The previous generator failed: {feedback}. Fix it."}
        )
    try:
        answer = ctx.chat(
            "test_generator",
            messages,
            template,
            key=f"round={cand.round};try={cand.test_repairs}",
            candidate=cand,
        )
        program = materialize.parse_generator(answer.content)
    except StageError as exc:
        _decide(ctx, cand, Decision.INVALID, exc.reason)
        return
    except BudgetExhausted:
        raise
    except LLMError as exc:
        _decide(ctx, cand, Decision.ERROR, f"model call failed: {exc}")
        return
    gen = {**cand.generators, "program": program}
    if ctx.settings.validate_inputs and cand.harness == "stdio" and "input_validator" not in gen:
        gen["input_validator"] = _write_input_validator(ctx, cand)
    cand.generators = gen
    cand.stage = Stage.GENERATED
    cand.save(update_fields=["generators", "stage", "validation_ledger"])


def _write_input_validator(ctx: Ctx, cand: Candidate) -> str:
    """The statement's input validator (written from the statement alone, like the brute
    force); "" when none could be had, recorded in the ledger (inputs then go unchecked)."""
    messages, template = materialize.validator_messages(
        statement=cand.generators.get("statement_body", cand.statement)
    )
    try:
        answer = ctx.chat(
            "input_validator",
            messages,
            template,
            key=f"round={cand.round};repair={cand.spec_repairs}",
            candidate=cand,
        )
        return materialize.parse_validator(answer.content)
    except BudgetExhausted:
        raise
    except (StageError, LLMError) as exc:
        why = exc.reason if isinstance(exc, StageError) else f"model call failed: {exc}"
        _ledger(cand, {"step": "input validator", "outcome": f"none: {why}"[:300]})
        return ""


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
        _ledger(
            cand,
            {
                "step": "input validator",
                "outcome": f"refuses the statement's own example(s) {refused}: not used",
            },
        )
        return None
    return check


def act_materialize(ctx: Ctx, action: Action) -> None:
    cand = _candidate_or_none(action)
    gen = cand.generators
    try:
        check_inputs = _input_checker(ctx, cand, gen.get("examples", []))
        result = materialize.materialize(
            code=cand.code,
            generator=gen["program"],
            examples=gen.get("examples", []),
            harness=cand.harness,
            entry_point=cand.entry_point,
            tier_counts=ctx.settings.tier_counts(cand.harness),
            limits=ctx.limits(),
            run_batch=execution.run_batch,
            validate_inputs=check_inputs,
            min_distinct_per_tier=ctx.settings.min_distinct_inputs_per_tier,
        )
    except StageError as exc:
        generator_fault = exc.reason.startswith("test generator")
        if (
            generator_fault
            and ctx.settings.enable_test_repair
            and cand.test_repairs < ctx.settings.test_repair_attempts
        ):
            _ledger(
                cand,
                {
                    "step": "materialize",
                    "outcome": "generator failed; regenerating",
                    "reason": exc.reason,
                },
            )
            cand.generators = {**gen, "generator_feedback": exc.reason}
            cand.generators.pop("program", None)
            cand.test_repairs += 1
            cand.stage = Stage.PROPOSED
            cand.save(update_fields=["generators", "validation_ledger", "test_repairs", "stage"])
            return
        _ledger(cand, {"step": "materialize", "outcome": "invalid", "reason": exc.reason})
        cand.save(update_fields=["validation_ledger"])
        _decide(ctx, cand, Decision.INVALID, exc.reason)
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
        _ledger(
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
            cand.stage = Stage.PROPOSED
            cand.save(update_fields=["generators", "validation_ledger", "test_repairs", "stage"])
            return
    body = gen.get("statement_body", cand.statement)
    cand.tests = [t.to_dict() for t in result.all]
    cand.statement = propose.render_statement(body, [(t.input, t.output) for t in result.public])
    _ledger(
        cand,
        {
            "step": "materialize",
            "outcome": "ok",
            "public": len(result.public),
            "hidden": len(result.hidden),
            "notes": result.notes,
        },
    )
    cand.stage = Stage.MATERIALIZED
    cand.save(update_fields=["tests", "statement", "validation_ledger", "stage"])


# --------------------------------------------------------------------------- validation


def act_validate_witnesses(ctx: Ctx, action: Action) -> None:
    cand = _candidate_or_none(action)
    gen = dict(cand.generators)
    body = gen.get("statement_body", cand.statement)
    public = [t for t in cand.tests if not t["hidden"]]
    version = cand.repairs_used
    try:
        if "brute_force" not in gen:
            messages, template = validate.brute_force_messages(
                statement=cand.statement, harness=cand.harness, entry_point=cand.entry_point
            )
            answer = ctx.chat(
                "brute_force",
                messages,
                template,
                key=f"round={cand.round};repair={version}",
                candidate=cand,
            )
            gen["brute_force"] = validate.parse_brute_force(answer.content)
        if "oracle_outputs" not in gen:
            messages, template = validate.oracle_messages(
                statement=body, examples=[t["input"] for t in public]
            )
            answer = ctx.chat(
                "oracle",
                messages,
                template,
                key=f"round={cand.round};repair={version}",
                candidate=cand,
            )
            gen["oracle_outputs"] = validate.parse_oracle(answer.content, len(public))
    except StageError as exc:
        _decide(ctx, cand, Decision.INVALID, exc.reason)
        return
    except BudgetExhausted:
        raise
    except LLMError as exc:
        _decide(ctx, cand, Decision.ERROR, f"model call failed: {exc}")
        return
    cand.generators = gen
    cand.save(update_fields=["generators"])


def _request_repair_or_reject(
    ctx: Ctx, cand: Candidate, target: str, evidence: str, why: str
) -> None:
    s = ctx.settings
    if target == validate.STATEMENT and cand.spec_repairs >= s.spec_retry_attempts:
        exhausted = f"statement revisions exhausted ({cand.spec_repairs}/{s.spec_retry_attempts})"
    elif cand.repairs_used >= s.max_candidate_repairs:
        exhausted = f"repair budget exhausted ({cand.repairs_used}/{s.max_candidate_repairs})"
    else:
        exhausted = ""
    if exhausted:
        _ledger(cand, {"step": "validate", "outcome": "invalid", "reason": f"{why}; {exhausted}"})
        cand.save(update_fields=["validation_ledger"])
        _decide(ctx, cand, Decision.INVALID, f"{why}; {exhausted}")
        return
    cand.generators = {
        **cand.generators,
        "pending_repair": {"target": target, "evidence": evidence, "why": why},
    }
    cand.save(update_fields=["generators", "validation_ledger"])


def _contract(cand: Candidate) -> dict:
    return (cand.generators or {}).get("contract") or {"kind": "exact"}


def _comparison(cand: Candidate) -> dict:
    """The judge's comparison for the candidate's declared output contract."""
    return contracts.comparison_for(_contract(cand))


def _same_under_contract(cand: Candidate, limits):
    """same(actual, expected, input) under the candidate's contract; a checker contract runs
    the writer's checker, sandboxed, once per pair."""
    contract = _contract(cand)
    if contract["kind"] != "checker":
        return lambda actual, expected, given: bool(
            contracts.same_output(expected, actual, contract)
        )

    def same(actual, expected, given):
        doc = {"input": given, "expected": expected, "actual": actual}
        try:
            (verdict,) = contracts.checker_verdicts(contract["checker"], [doc], limits=limits)
        except RuntimeError as exc:
            raise SandboxFailure(str(exc))
        return verdict == "AC"

    return same


def _checker_accepts_the_reference(ctx: Ctx, cand: Candidate, limits) -> bool:
    """A checker must accept the reference's own outputs (run once per candidate, recorded);
    one that rejects them, or crashes, would fail every right answer: the candidate is invalid."""
    contract = _contract(cand)
    gen = cand.generators
    if contract["kind"] != "checker" or gen.get("contract_verified"):
        return True
    docs = [
        {"input": t["input"], "expected": t["output"], "actual": t["output"]} for t in cand.tests
    ]
    try:
        verdicts = contracts.checker_verdicts(contract["checker"], docs, limits=limits)
    except RuntimeError as exc:
        raise SandboxFailure(str(exc))
    bad = [i + 1 for i, v in enumerate(verdicts) if v != "AC"]
    _ledger(
        cand,
        {
            "step": "output contract",
            "contract": contracts.describe(contract),
            "outcome": "checker accepts the reference's outputs" if not bad else "rejected",
            "tests": len(docs),
        },
    )
    if bad:
        cand.save(update_fields=["validation_ledger"])
        _decide(
            ctx,
            cand,
            Decision.INVALID,
            f"the declared checker rejects the reference's own output on test(s) {bad[:5]}",
        )
        return False
    cand.generators = {**gen, "contract_verified": True}
    cand.save(update_fields=["generators", "validation_ledger"])
    return True


def _parent_check(ctx: Ctx, cand: Candidate) -> bool:
    """Run the parent's reference on the candidate's hidden tests (under its output contract)
    and record whether it is now wrong, too slow, or still right. With
    ``require_parent_insufficient`` a parent that still solves every test makes the candidate
    not_harder (the mutation did not make the parent's approach insufficient). Returns whether
    the candidate may go on."""
    parent_code = cand.parent.reference_solution
    if not parent_code.strip():
        return True
    hidden = [(t["input"], t["output"]) for t in cand.tests if t["hidden"]] or [
        (t["input"], t["output"]) for t in cand.tests
    ]
    result = _judge_code(
        parent_code,
        hidden,
        harness=cand.harness,
        entry_point=cand.entry_point,
        limits=ctx.limits(),
        comparison=_comparison(cand),
    )
    if result.verdict == "AC":
        outcome = "parent still solves every new test"
    elif result.verdict in ("TLE", "MLE"):
        outcome = f"parent too slow ({result.verdict})"
    else:
        outcome = f"parent now wrong ({result.verdict})"
    failing = next((i for i, t in enumerate(result.tests) if t.verdict != "AC"), None)
    entry = {
        "step": "parent check",
        "outcome": outcome,
        "verdict": result.verdict,
        "passed": result.passed,
        "total": result.total,
    }
    if failing is not None:
        entry["first_failing_test"] = failing + 1
    _ledger(cand, entry)
    cand.generators = {**cand.generators, "parent_check": result.verdict}
    cand.save(update_fields=["validation_ledger", "generators"])
    if result.verdict == "AC" and ctx.settings.require_parent_insufficient:
        _decide(
            ctx,
            cand,
            Decision.NOT_HARDER,
            "the parent's reference still solves every new test (require_parent_insufficient)",
        )
        return False
    return True


def act_validate_execute(ctx: Ctx, action: Action) -> None:
    cand = _candidate_or_none(action)
    limits = ctx.limits()
    if not _checker_accepts_the_reference(ctx, cand, limits):
        return
    gen = cand.generators
    public = [t for t in cand.tests if not t["hidden"]]
    hidden = [t for t in cand.tests if t["hidden"]]
    same = _same_under_contract(cand, limits)
    outcomes = execution.run_batch(
        gen["brute_force"], [t["input"] for t in public], harness="stdio", limits=limits
    )
    if any(o.status == "SE" for o in outcomes):
        raise SandboxFailure("sandbox failure while running the brute force")
    brute = [o.stdout if o.status == "OK" else None for o in outcomes]
    result = validate.vote(
        [t["output"] for t in public],
        brute,
        gen["oracle_outputs"],
        same,
        inputs=[t["input"] for t in public],
    )
    _ledger(
        cand,
        {
            "step": "vote",
            "outcome": "agree" if result.agree else f"disagree: repair {result.target}",
            "oracle_overruled": result.oracle_overruled,
            "examples": result.per_example,
            "brute_force_status": [o.status for o in outcomes],
        },
    )
    if not result.agree:
        evidence = "\n".join(
            f"Example {row['example']}: reference={row['reference']!r} brute_force={row['brute_force']!r} "
            f"oracle={row['oracle']!r} ({row['verdict']})"
            for row in result.per_example
            if row["verdict"] != "agree"
        )
        _request_repair_or_reject(
            ctx,
            cand,
            result.target,
            evidence,
            f"public-example vote disagrees ({result.target} suspected)",
        )
        return
    outcomes = execution.run_batch(
        gen["brute_force"], [t["input"] for t in hidden], harness="stdio", limits=limits
    )
    if any(o.status == "SE" for o in outcomes):
        raise SandboxFailure("sandbox failure while running the brute force on hidden tests")
    check = validate.hidden_check(
        hidden, outcomes, lambda actual, expected, given: same(actual, expected, given)
    )
    _ledger(
        cand,
        {
            "step": "hidden check",
            "outcome": "agree" if check.agree else "counterexample",
            "checked": check.checked,
            "infeasible": check.infeasible,
            "counterexample": check.counterexample,
        },
    )
    if not check.agree:
        ce = check.counterexample
        evidence = (
            f"Hidden {ce['tier']} test input:\n{ce['input']}\nreference output: {ce['reference_output']!r}\n"
            f"brute-force output: {ce['brute_force_output']!r}"
        )
        # The vetted brute force and the reference disagree on a concrete input: the reference is
        # the suspect unless the brute force crashed.
        target = (
            validate.BRUTE_FORCE
            if ce["brute_force_output"] in ("RE", "WA", "CE")
            else validate.REFERENCE
        )
        _request_repair_or_reject(
            ctx, cand, target, evidence, "brute force disagrees with the reference on a hidden test"
        )
        return
    if not _parent_check(ctx, cand):
        return
    cand.valid = True
    cand.stage = Stage.VALIDATED
    cand.save(update_fields=["validation_ledger", "valid", "stage"])


def act_repair(ctx: Ctx, action: Action) -> None:
    cand = _candidate_or_none(action)
    gen = dict(cand.generators)
    pending = gen.pop("pending_repair")
    target = pending["target"]
    messages, template = validate.repair_messages(
        target=target,
        statement=gen.get("statement_body", cand.statement),
        reference=cand.code,
        brute_force=gen.get("brute_force", ""),
        evidence=pending["evidence"],
    )
    try:
        answer = ctx.chat(
            "repair",
            messages,
            template,
            key=f"round={cand.round};repair={cand.repairs_used}",
            candidate=cand,
        )
        fixed = validate.parse_repair(answer.content, target)
        outcome = "applied"
    except StageError as exc:
        fixed, outcome = None, f"unusable: {exc.reason}"
    except BudgetExhausted:
        raise
    except LLMError as exc:
        fixed, outcome = None, f"model call failed: {exc}"
    cand.repairs_used += 1
    if target == validate.STATEMENT:
        cand.spec_repairs += 1
    _ledger(
        cand,
        {
            "step": "repair",
            "target": target,
            "why": pending["why"],
            "outcome": outcome,
            "repair": cand.repairs_used,
        },
    )
    if fixed is not None:
        if target == validate.REFERENCE:
            cand.code = fixed
            cand.code_diff = propose.code_diff(cand.parent.reference_solution, fixed)
            cand.stage = Stage.GENERATED  # outputs must be materialized again from the new C'
        elif target == validate.BRUTE_FORCE:
            gen["brute_force"] = fixed
        else:
            gen["statement_body"] = fixed
            gen.pop("oracle_outputs", None)
            gen.pop("faithfulness", None)
            # The brute force was written from the old statement: vetting the new statement
            # with it would test the old one. It is written again from the repaired statement.
            if gen.pop("brute_force", None) is not None:
                gen["brute_force_regenerated"] = gen.get("brute_force_regenerated", 0) + 1
            # The validator checks the stated constraints: the old statement's are gone.
            gen.pop("input_validator", None)
            cand.stage = Stage.GENERATED  # re-render the statement with its examples
    elif cand.harness != "stdio":
        gen.pop("faithfulness", None)
    cand.generators = gen
    cand.save()
    if fixed is None and cand.repairs_used >= ctx.settings.max_candidate_repairs:
        _decide(
            ctx, cand, Decision.INVALID, f"repair failed and the budget is exhausted ({outcome})"
        )


def act_faithfulness_solve(ctx: Ctx, action: Action) -> None:
    cand = _candidate_or_none(action)
    messages, template = difficulty.solver_messages(
        statement=cand.statement,
        harness=cand.harness,
        entry_point=cand.entry_point,
        starter_code=_candidate_starter(ctx, cand),
    )
    answers: list[dict] = [{} for _ in range(ctx.settings.faithfulness_check_N)]
    budget: list[BudgetExhausted] = []

    def job(index):
        try:
            answer = ctx.chat(
                "faithfulness",
                messages,
                template,
                key=f"round={cand.round};repair={cand.spec_repairs};attempt={index}",
                candidate=cand,
            )
            code, problem = difficulty.solver_code(answer.content)
            answers[index] = {"code": code, "problem": problem}
        except BudgetExhausted as exc:
            budget.append(exc)
        except LLMError as exc:
            # Not an answer: never a 0 pass rate that would call the statement underspecified.
            answers[index] = {"code": "", "infra_error": str(exc)[:500]}

    _parallel([lambda i=i: job(i) for i in range(len(answers))], width=fanout_threads())
    if budget:
        raise budget[0]
    cand.generators = {**cand.generators, "faithfulness": answers}
    cand.save(update_fields=["generators"])


def act_faithfulness_execute(ctx: Ctx, action: Action) -> None:
    cand = _candidate_or_none(action)
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
            _decide(
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
            comparison=_comparison(cand),
        )
        if result.verdict == "SE":
            raise SandboxFailure("sandbox failure during the faithfulness check")
        rates.append(result.passed / result.total if result.total else 0.0)
    best = max(rates) if rates else 0.0
    floor = ctx.settings.faithfulness_min_pass_rate
    _ledger(
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
        if not _parent_check(ctx, cand):
            return
        cand.valid = True
        cand.stage = Stage.VALIDATED
        cand.save(update_fields=["validation_ledger", "valid", "stage"])
        return
    if cand.spec_repairs >= ctx.settings.faithfulness_max_repair:
        cand.save(update_fields=["validation_ledger"])
        _decide(
            ctx,
            cand,
            Decision.INVALID,
            f"statement underspecified: best-of-N pass rate {best:.2f} < {floor}",
        )
        return
    _request_repair_or_reject(
        ctx,
        cand,
        validate.STATEMENT,
        f"Solutions written from the statement pass at most {best:.0%} of the tests.",
        f"faithfulness best pass rate {best:.2f} below {floor}",
    )


# --------------------------------------------------------------------------- difficulty, judge, decision


def _candidate_starter(ctx: Ctx, cand: Candidate) -> str:
    """Call-based seeds that ship starter code (LeetCode-style) keep the convention in their
    evolved tasks: ``class Solution`` with the evolved reference's method signature."""
    if cand.harness == "stdio" or not ctx.seed.starter_code.strip():
        return ""
    return prompts.starter_from_solution(cand.code, cand.entry_point)


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


def _family_used_elsewhere(ctx: Ctx, cand: Candidate) -> bool:
    return (
        GlobalMemoryEntry.objects.filter(campaign=ctx.campaign, family=cand.family, accepted=True)
        .exclude(candidate__lineage=ctx.lineage)
        .exists()
    )


def act_judge(ctx: Ctx, action: Action) -> None:
    cand = _candidate_or_none(action)
    lineage = ctx.lineage
    reused = _family_used_elsewhere(ctx, cand)
    parent_level = lineage.parent_level or lineage.seed_level or 1
    seed_level = lineage.seed_level or 1
    outcome = accept.decide(
        level=cand.level,
        parent_level=parent_level,
        seed_level=seed_level,
        settings=ctx.settings,
        family_used_elsewhere=reused,
    )
    evidence = accept.level_evidence(
        passes=cand.passes or 0, attempts=cand.attempts or 0, settings=ctx.settings
    )
    if outcome.decision != Decision.ACCEPTED:
        why = outcome.reason + (f" ({evidence.describe()})" if evidence else "")
        _decide(ctx, cand, Decision.NOT_HARDER, why)
        return
    needed = accept.required_level(
        parent_level=parent_level,
        seed_level=seed_level,
        settings=ctx.settings,
        family_used_elsewhere=reused,
    )
    per_model = max((k for _, k in panel_plan(ctx, cand)), default=0)
    verdict = accept.evidence_verdict(
        evidence=evidence, needed=needed, attempts_per_model=per_model, settings=ctx.settings
    )
    if evidence is not None:
        _ledger(
            cand,
            {
                "step": "difficulty evidence",
                "evidence": evidence.describe(),
                "needed_level": needed,
                "outcome": verdict,
            },
        )
        cand.save(update_fields=["validation_ledger"])
    if verdict == "more":
        # The point estimate gains a level but the interval does not yet: ask the panel again
        # (K more per model, up to max_panel_attempts) rather than call a level on noise.
        gen = dict(cand.generators)
        gen["panel_extra"] = gen.get("panel_extra", 0) + ctx.settings.target_eval_k
        cand.generators = gen
        cand.stage = Stage.VALIDATED
        cand.save(update_fields=["generators", "stage"])
        return
    if verdict == "insufficient":
        _decide(
            ctx,
            cand,
            Decision.NOT_HARDER,
            f"level {cand.level} by point estimate, but {evidence.describe()}, below the level "
            f"{needed} needed, after {per_model} attempts per model (max_panel_attempts)",
        )
        return
    earlier = {"seed": ctx.seed.statement}
    for other in (
        lineage.candidates.exclude(pk=cand.pk).exclude(statement="").only("round", "statement")
    ):
        earlier[f"round {other.round}"] = other.statement
    report: dict = {"acceptance": outcome.reason + (f"; {evidence.describe()}" if evidence else "")}
    if ctx.settings.judge_near_duplicate_check:
        dup = judge.near_duplicate(cand.statement, earlier, ctx.settings.near_duplicate_threshold)
        report["lexical"] = {
            "score": dup.score,
            "against": dup.against,
            "threshold": ctx.settings.near_duplicate_threshold,
        }
        if dup.duplicate:
            cand.judge_report = report
            cand.save(update_fields=["judge_report"])
            _decide(
                ctx,
                cand,
                Decision.DUPLICATE,
                f"lexical near-duplicate of {dup.against} (similarity {dup.score})",
            )
            return
    messages, template = judge.judge_messages(
        statement=cand.statement, idea=cand.idea, lineage_statements=list(earlier.values())
    )
    try:
        answer = ctx.chat("judge", messages, template, key=f"round={cand.round}", candidate=cand)
    except BudgetExhausted:
        raise
    except LLMError as exc:
        _decide(ctx, cand, Decision.ERROR, f"judge call failed: {exc}")
        return
    verdict = judge.parse_judge(answer.content)
    report["model"] = {
        "artificial": verdict.artificial,
        "duplicate": verdict.duplicate,
        "reasons": verdict.reasons,
        "parsed": verdict.parsed,
    }
    cand.judge_report = report
    cand.stage = Stage.JUDGED
    cand.save(update_fields=["judge_report", "stage"])


def act_decide(ctx: Ctx, action: Action) -> None:
    cand = _candidate_or_none(action)
    model = cand.judge_report.get("model", {})
    reasons = "; ".join(model.get("reasons", []))
    if not model.get("parsed", False):
        decision, reason = Decision.ERROR, f"judge answer unparsable: {reasons}"
    elif model.get("duplicate"):
        decision, reason = Decision.DUPLICATE, f"judge: near-duplicate reskin — {reasons}"
    elif model.get("artificial"):
        decision, reason = Decision.JUDGE_REJECTED, f"judge: false difficulty — {reasons}"
    else:
        decision, reason = Decision.ACCEPTED, cand.judge_report.get("acceptance", "accepted")
    _decide(ctx, cand, decision, reason)


@transaction.atomic
def _decide(ctx: Ctx, cand: Candidate, decision: str, reason: str) -> None:
    """Record the decision once (a rerun finds it decided and does nothing), update the lineage,
    its memory and, for an acceptance, the accepted problem and global memory."""
    lineage = Lineage.objects.select_for_update().get(pk=ctx.lineage.pk)
    cand = Candidate.objects.select_for_update().select_related("parent").get(pk=cand.pk)
    if cand.decision:
        return
    cand.decision = decision
    cand.decision_reason = reason[:4000]
    cand.decided_at = timezone.now()
    cand.stage = Stage.DECIDED
    lineage.iterations += 1
    if decision == Decision.ACCEPTED:
        problem = _accepted_problem(ctx, cand)
        cand.accepted_problem = problem
        gain = (cand.level or 0) - (lineage.seed_level or 0)
        lineage.parent = problem
        lineage.parent_level = cand.level
        lineage.accepted_count += 1
        lineage.no_improve = 0
        lineage.best_level = max(lineage.best_level or 0, cand.level or 0)
        cand.save()
        GlobalMemoryEntry.objects.create(
            campaign=ctx.campaign,
            family=cand.family or "unnamed",
            summary=cand.idea[:600],
            level_gain=gain,
            candidate=cand,
            decision=decision,
        )
    else:
        lineage.no_improve += 1
        cand.save()
        if cand.family:
            # Attempted, not accepted: remembered so other lineages see what did not work.
            GlobalMemoryEntry.objects.create(
                campaign=ctx.campaign,
                family=cand.family,
                summary=cand.idea[:600],
                level_gain=(cand.level or 0) - (lineage.seed_level or 0) if cand.level else 0,
                candidate=cand,
                accepted=False,
                decision=decision,
            )
    record = {
        "round": cand.round,
        "decision": decision,
        "reason": reason[:400],
        "family": cand.family,
        "idea": cand.idea[:300],
        "level": cand.level,
        "pass_rate": cand.pass_rate,
        "errors": cand.error_pattern,
        "repairs": cand.repairs_used,
    }
    lineage.memory = memory.remember(lineage.memory, record, window=ctx.settings.memory_raw_window)
    stop = accept.stop_reason(
        iterations=lineage.iterations,
        accepted=lineage.accepted_count,
        no_improve=lineage.no_improve,
        best_level=lineage.best_level if lineage.accepted_count else None,
        settings=ctx.settings,
    )
    if stop:
        lineage.state = LineageState.DONE
        lineage.stop_reason = stop
    lineage.save(
        update_fields=[
            "iterations",
            "parent",
            "parent_level",
            "accepted_count",
            "no_improve",
            "best_level",
            "memory",
            "state",
            "stop_reason",
            "updated_at",
        ]
    )
    ctx.lineage = lineage


def _accepted_problem(ctx: Ctx, cand: Candidate) -> Problem:
    parent = cand.parent
    root = parent.lineage_root or parent
    problem = Problem.objects.create(
        title=cand.title or f"{root.title} (evolved, round {cand.round})",
        statement=cand.statement,
        reference_solution=cand.code,
        harness=cand.harness,
        entry_point=cand.entry_point,
        starter_code=_candidate_starter(ctx, cand),
        comparison=_comparison(cand),
        time_limit_s=ctx.settings.execution_timeout,
        memory_mb=ctx.settings.memory_mb,
        kind=ProblemKind.EVOLVED,
        method="benchevolver",
        origin_dataset=root.origin_dataset,
        origin_difficulty=root.origin_difficulty,
        metadata={
            "campaign": ctx.campaign.pk,
            "candidate": cand.pk,
            "family": cand.family,
            "level": cand.level,
            "seed_level": ctx.lineage.seed_level,
            "pass_rate": cand.pass_rate,
        },
        parent=parent,
        lineage_root=root,
        lineage_depth=parent.lineage_depth + 1,
    )
    counters: dict[str, int] = {}
    rows = []
    for data in cand.tests:
        test = GeneratedTest.from_dict(data)
        ordinal = counters.get(test.tier, 0)
        counters[test.tier] = ordinal + 1
        row = TestCase(
            problem=problem,
            tier=test.tier,
            ordinal=ordinal,
            hidden=test.hidden,
            provenance=test.provenance,
        )
        row.input = test.input
        row.output = test.output
        rows.append(row)
    TestCase.objects.bulk_create(rows)
    return problem


ACTIONS: dict[str, Callable[[Ctx, Action], None]] = {
    "calibrate_solve": act_calibrate_solve,
    "calibrate_judge": act_calibrate_judge,
    "calibrate_finish": act_calibrate_finish,
    "skip_scored_seed": act_skip_scored_seed,
    "skip_without_reference": act_skip_without_reference,
    "propose": act_propose,
    "write_tests": act_write_tests,
    "materialize": act_materialize,
    "validate_witnesses": act_validate_witnesses,
    "validate_execute": act_validate_execute,
    "repair": act_repair,
    "faithfulness_solve": act_faithfulness_solve,
    "faithfulness_execute": act_faithfulness_execute,
    "measure_solve": act_measure_solve,
    "measure_judge": act_measure_judge,
    "judge": act_judge,
    "decide": act_decide,
}
