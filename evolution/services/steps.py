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

from evolution.llm import BudgetExhausted, CallContext, LLMClient, LLMError
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
from evolution.pipeline import accept, difficulty, judge, materialize, memory, propose, validate
from evolution.pipeline.config import EvolutionSettings
from evolution.pipeline.types import GeneratedTest, StageError
from evolution.streams import runner
from evolution.streams.errors import SandboxFailure
from evolution.streams.runner import StepReport

from . import execution

log = logging.getLogger(__name__)

DEFAULT = "default"
SANDBOX = "sandbox"
ANY = "any"

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
            endpoint or self.endpoint_for(role),
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
            temperature=self.settings.temperature if temperature is None else temperature,
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
        k = ctx.settings.target_eval_k
        members = list(ctx.campaign.panel.members.all())
        attempts = SolverAttempt.objects.filter(lineage=lineage, candidate__isnull=True)
        if attempts.count() < k * len(members):
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
        attempts = cand.solver_attempts.all()
        if attempts.count() < ctx.settings.target_eval_k * ctx.campaign.panel.members.count():
            return Action("measure_solve", DEFAULT, c)
        return Action("measure_judge", SANDBOX, c)
    if cand.stage == Stage.MEASURED:
        return Action("judge", DEFAULT, c)
    return Action("decide", ANY, c)


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
    ctx: Ctx, *, candidate: Candidate | None, statement: str, harness: str, entry_point: str
):
    """Ask every panel model K times; each answer is stored as soon as it arrives."""
    k = ctx.settings.target_eval_k
    existing = set(
        SolverAttempt.objects.filter(lineage=ctx.lineage, candidate=candidate).values_list(
            "endpoint_id", "attempt_index"
        )
    )
    messages, template = difficulty.solver_messages(
        statement=statement, harness=harness, entry_point=entry_point
    )
    round_key = f"round={candidate.round}" if candidate else "round=0"
    jobs = []
    budget_errors: list[BudgetExhausted] = []
    for member in ctx.campaign.panel.members.select_related("endpoint"):
        for index in range(k):
            if (member.endpoint_id, index) in existing:
                continue

            def job(endpoint=member.endpoint, index=index):
                try:
                    answer = ctx.chat(
                        "solver",
                        messages,
                        template,
                        key=f"{round_key};model={endpoint.model};attempt={index}",
                        candidate=candidate,
                        endpoint=endpoint,
                    )
                    code, problem = difficulty.solver_code(answer.content)
                    details = {"call_id": answer.call_id}
                except BudgetExhausted as exc:
                    budget_errors.append(exc)
                    return
                except LLMError as exc:
                    code, problem, details = "", "", {"llm_error": str(exc)[:500]}
                if problem:
                    details["parse_error"] = problem
                # A concurrent rerun may have stored this attempt first.
                with contextlib.suppress(IntegrityError):
                    SolverAttempt.objects.create(
                        lineage=ctx.lineage,
                        candidate=candidate,
                        endpoint=endpoint,
                        attempt_index=index,
                        code=code,
                        # No code (unparsable or failed call) is a failed attempt: judged "NC".
                        verdict="" if code else "NC",
                        details=details,
                    )

            jobs.append(job)
    # No more threads than the panel can serve at once: each thread holds a DB connection.
    limit = sum(
        m.endpoint.concurrency_limit for m in ctx.campaign.panel.members.select_related("endpoint")
    )
    _parallel(jobs, width=max(1, min(fanout_threads(), limit)))
    if budget_errors:
        raise budget_errors[0]


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


def act_calibrate_finish(ctx: Ctx, action: Action) -> None:
    attempts = list(
        SolverAttempt.objects.filter(lineage=ctx.lineage, candidate__isnull=True).select_related(
            "endpoint"
        )
    )
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
    elif not ctx.seed.reference_solution.strip():
        updates.update(
            state=LineageState.SKIPPED, stop_reason="the seed has no reference solution to evolve"
        )
    else:
        updates["state"] = LineageState.EVOLVING
    Lineage.objects.filter(pk=ctx.lineage.pk, state=LineageState.PENDING).update(**updates)


# --------------------------------------------------------------------------- proposer


def _memory_texts(ctx: Ctx) -> tuple[str, str]:
    local = memory.digest_text(ctx.lineage.memory, recent_k=ctx.settings.memory_digest_recent_k)
    entries = list(
        GlobalMemoryEntry.objects.filter(campaign=ctx.campaign)
        .exclude(candidate__lineage=ctx.lineage)
        .order_by("created_at")
        .values_list("family", "summary", "level_gain")
    )
    glob = memory.global_text(
        entries,
        max_entries=ctx.settings.global_memory_max_entries,
        max_chars=ctx.settings.global_memory_max_chars,
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
        generators={"statement_body": written.statement, "examples": written.examples},
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
    cand.generators = {**cand.generators, "program": program}
    cand.stage = Stage.GENERATED
    cand.save(update_fields=["generators", "stage"])


def act_materialize(ctx: Ctx, action: Action) -> None:
    cand = _candidate_or_none(action)
    gen = cand.generators
    try:
        result = materialize.materialize(
            code=cand.code,
            generator=gen["program"],
            examples=gen.get("examples", []),
            harness=cand.harness,
            entry_point=cand.entry_point,
            tier_counts=ctx.settings.tier_counts(cand.harness),
            limits=ctx.limits(),
            run_batch=execution.run_batch,
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


def act_validate_execute(ctx: Ctx, action: Action) -> None:
    cand = _candidate_or_none(action)
    gen = cand.generators
    public = [t for t in cand.tests if not t["hidden"]]
    hidden = [t for t in cand.tests if t["hidden"]]
    limits = ctx.limits()
    outcomes = execution.run_batch(
        gen["brute_force"], [t["input"] for t in public], harness="stdio", limits=limits
    )
    if any(o.status == "SE" for o in outcomes):
        raise SandboxFailure("sandbox failure while running the brute force")
    brute = [o.stdout if o.status == "OK" else None for o in outcomes]
    result = validate.vote(
        [t["output"] for t in public], brute, gen["oracle_outputs"], execution.same_output
    )
    _ledger(
        cand,
        {
            "step": "vote",
            "outcome": "agree" if result.agree else f"disagree: repair {result.target}",
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
    check = validate.hidden_check(hidden, outcomes, execution.same_output)
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
        statement=cand.statement, harness=cand.harness, entry_point=cand.entry_point
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
            answers[index] = {"code": "", "problem": f"model call failed: {exc}"}

    _parallel([lambda i=i: job(i) for i in range(len(answers))], width=fanout_threads())
    if budget:
        raise budget[0]
    cand.generators = {**cand.generators, "faithfulness": answers}
    cand.save(update_fields=["generators"])


def act_faithfulness_execute(ctx: Ctx, action: Action) -> None:
    cand = _candidate_or_none(action)
    tests = [(t["input"], t["output"]) for t in cand.tests]
    rates = []
    for answer in cand.generators["faithfulness"]:
        if not answer.get("code"):
            rates.append(0.0)
            continue
        result = execution.judge(
            answer["code"],
            tests,
            harness=cand.harness,
            limits=ctx.limits(),
            entry_point=cand.entry_point,
        )
        if result.verdict == "SE":
            raise SandboxFailure("sandbox failure during the faithfulness check")
        rates.append(result.passed / result.total if result.total else 0.0)
    best = max(rates) if rates else 0.0
    floor = ctx.settings.faithfulness_min_pass_rate
    _ledger(cand, {"step": "faithfulness", "pass_rates": rates, "best": best, "floor": floor})
    if validate.faithfulness_passes(best, floor):
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


def act_measure_solve(ctx: Ctx, action: Action) -> None:
    cand = _candidate_or_none(action)
    _solve_attempts(
        ctx,
        candidate=cand,
        statement=cand.statement,
        harness=cand.harness,
        entry_point=cand.entry_point,
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
        GlobalMemoryEntry.objects.filter(campaign=ctx.campaign, family=cand.family)
        .exclude(candidate__lineage=ctx.lineage)
        .exists()
    )


def act_judge(ctx: Ctx, action: Action) -> None:
    cand = _candidate_or_none(action)
    lineage = ctx.lineage
    outcome = accept.decide(
        level=cand.level,
        parent_level=lineage.parent_level or lineage.seed_level or 1,
        seed_level=lineage.seed_level or 1,
        settings=ctx.settings,
        family_used_elsewhere=_family_used_elsewhere(ctx, cand),
    )
    if outcome.decision != Decision.ACCEPTED:
        _decide(ctx, cand, Decision.NOT_HARDER, outcome.reason)
        return
    earlier = {"seed": ctx.seed.statement}
    for other in (
        lineage.candidates.exclude(pk=cand.pk).exclude(statement="").only("round", "statement")
    ):
        earlier[f"round {other.round}"] = other.statement
    report: dict = {"acceptance": outcome.reason}
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
        )
    else:
        lineage.no_improve += 1
        cand.save()
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
