"""Writes of EvoSyn campaigns: creation, the step machine, the random-test control dataset.

The pipeline of seed 001 is one sequential stream per campaign, advanced one action at a time
by ``evosyn_advance``: the caller claims the campaign row with a conditional UPDATE (a lease),
the next action is worked out from the rows alone, and its result is stored as it arrives.

1. Seed instances (human-verified): M solutions, N tests, the M x N pass matrix and each
   solution's verdict on the human tests.
2. Strategy search: iteration 0 scores the document's initial strategy; iterations
   1..max_iterations mutate an island's elite (MAP-Elites over islands), run the program in the
   sandbox on every seed matrix and score it by Criterion-1 and Criterion-2. A strategy that
   crashes, times out or prints garbage scores as failing, is recorded, and the search goes on.
3. Synthesis: new problems with seeds as in-context examples (near-duplicates dropped), each
   with M solutions, N tests and its matrix; the best strategy ranks them; identical-solution
   and zero-variance pruning record their reasons; a kept problem becomes
   ``Problem(kind="synthesized", method="evosyn")`` with the selected tests and the strongest
   solution, so it enters review rounds, the gate and releases like evolved problems.

A worker killed at any instant loses at most the action in flight; unique (instance, index),
(campaign, iteration) and (campaign, role, slot) constraints mean a rerun never duplicates.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import random
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F

from evolution import sandbox
from evolution.llm import (
    BudgetExhausted,
    CallContext,
    LLMClient,
    LLMError,
    ParseError,
    mark_unparsable,
)
from evolution.models import Campaign, ModelEndpoint, Problem, ProblemSet, TestCase
from evolution.models.campaigns import CampaignKind
from evolution.models.problems import ProblemKind
from evolution.pipeline import judge as judge_stage
from evolution.streams import runner
from evolution.streams.errors import SandboxFailure
from evolution.streams.kinds import unit_transition
from evolution.streams.runner import StepReport

from .config import EvoSynSettings
from .engine import prompts as P
from .engine import pruning, search
from .engine import strategy as S
from .models import (
    ControlSet,
    EvoSynCampaign,
    Instance,
    InstanceRole,
    InstanceStatus,
    MatrixRow,
    Solution,
    Strategy,
    StrategyStatus,
    TestItem,
)

log = logging.getLogger(__name__)
METHOD = KIND_NAME = "evosyn"
SEED_HARNESSES = ("assert", "function")


class SandboxBudgetReached(Exception):
    """The campaign's sandbox cost budget would be exceeded by the next execution batch."""


# --------------------------------------------------------------------------- creation


@transaction.atomic
def evosyn_campaign_create(
    *,
    name: str,
    seed_set: ProblemSet,
    endpoint: ModelEndpoint,
    settings: dict | None = None,
    seed_limit: int | None = None,
    role_endpoints: dict | None = None,
    budget_max_calls: int | None = None,
    budget_max_tokens: int | None = None,
    budget_max_cost=None,
    created_by=None,
) -> Campaign:
    """Validate the settings (ValidationError names each bad key) and create a draft campaign of
    kind "evosyn" with one seed instance per usable seed: a function-level problem (harness
    assert or function, an entry point) with human tests, e.g. HumanEval."""
    if not name.strip():
        raise ValidationError({"name": ["a campaign needs a name"]})
    validated = EvoSynSettings.from_dict(settings)
    seeds = [
        p
        for p in seed_set.problems.order_by("id").prefetch_related("tests")
        if p.harness in SEED_HARNESSES and p.entry_point and p.tests.all()
    ]
    if seed_limit:
        seeds = seeds[:seed_limit]
    if not seeds:
        raise ValidationError(
            {
                "seed_set": [
                    f"seed set {seed_set.name!r} has no function-level problem with human tests"
                ]
            }
        )
    role_endpoints = role_endpoints or {}
    endpoints = [endpoint]
    for role, endpoint_id in role_endpoints.items():
        other = ModelEndpoint.objects.filter(pk=endpoint_id).first()
        if other is None:
            raise ValidationError(
                {"role_endpoints": [f"role {role}: endpoint {endpoint_id} does not exist"]}
            )
        endpoints.append(other)
    campaign = Campaign.objects.create(
        name=name.strip(),
        kind=CampaignKind.EVOSYN,
        seed_set=seed_set,
        seed_limit=seed_limit,
        evolver=endpoint,
        role_endpoints=role_endpoints,
        settings=validated.to_dict(),
        budget_max_calls=budget_max_calls,
        budget_max_tokens=budget_max_tokens,
        budget_max_cost=budget_max_cost,
        replayed=all(e.is_replay for e in endpoints),
        created_by=created_by,
    )
    esc = EvoSynCampaign.objects.create(
        campaign=campaign, archive=search.empty_archive(validated.num_islands)
    )
    Instance.objects.bulk_create(
        Instance(
            evosyn=esc,
            role=InstanceRole.SEED,
            slot=i,
            problem=seed,
            title=seed.title,
            statement=seed.statement,
            entry_point=seed.entry_point,
        )
        for i, seed in enumerate(seeds)
    )
    return campaign


# --------------------------------------------------------------------------- the step machine


@dataclass(frozen=True)
class Action:
    name: str  # solve | write_tests | execute | evolve | synthesize | filter | finished
    instance_id: int | None = None
    number: int | None = None  # the iteration (evolve) or slot (synthesize)


@dataclass
class Ctx:
    esc: EvoSynCampaign
    settings: EvoSynSettings

    @property
    def campaign(self) -> Campaign:
        return self.esc.campaign

    def endpoint_for(self, role: str) -> ModelEndpoint:
        override = (self.campaign.role_endpoints or {}).get(role)
        if override:
            return ModelEndpoint.objects.get(pk=override)
        return self.campaign.evolver

    def chat(self, role: str, messages, template, *, key: str, temperature: float):
        client = LLMClient(self.endpoint_for(role), CallContext(campaign_id=self.campaign.pk))
        return client.chat(
            messages,
            role=role,
            template=template.name,
            template_version=template.version,
            replay_key=f"evosyn;{key};role={role}",
            temperature=temperature,
        )

    @property
    def limits(self) -> sandbox.Limits:
        return sandbox.Limits(
            time_s=self.settings.execution_time_s, memory_mb=self.settings.memory_mb
        )

    @property
    def strategy_limits(self) -> sandbox.Limits:
        return sandbox.Limits(
            time_s=self.settings.strategy_time_s, memory_mb=self.settings.memory_mb
        )


def _load(campaign_id: int) -> Ctx:
    esc = EvoSynCampaign.objects.select_related("campaign", "campaign__evolver").get(pk=campaign_id)
    return Ctx(esc=esc, settings=EvoSynSettings.from_dict(esc.campaign.settings))


def _prep_action(ctx: Ctx, inst: Instance) -> Action:
    s = ctx.settings
    if inst.solutions.count() < s.solutions_per_problem:
        return Action("solve", instance_id=inst.pk)
    if inst.tests.count() < s.tests_per_problem and inst.test_calls_made < s.test_calls:
        return Action("write_tests", instance_id=inst.pk)
    return Action("execute", instance_id=inst.pk)


def next_action(ctx: Ctx) -> Action:
    """The next thing to do, from the rows alone (so a rerun after a crash picks up here)."""
    s = ctx.settings
    instances = list(ctx.esc.instances.order_by("role", "slot"))
    seeds = [i for i in instances if i.role == InstanceRole.SEED]
    for inst in seeds:
        if inst.status == InstanceStatus.PENDING:
            return _prep_action(ctx, inst)
    iterations = ctx.esc.strategies.count()
    if iterations <= s.max_iterations:
        return Action("evolve", number=iterations)
    synthetic = [i for i in instances if i.role == InstanceRole.SYNTHETIC]
    if len(synthetic) < s.synth_problems:
        return Action("synthesize", number=len(synthetic))
    for inst in synthetic:
        if inst.status == InstanceStatus.PENDING:
            return _prep_action(ctx, inst)
        if inst.status == InstanceStatus.READY:
            return Action("filter", instance_id=inst.pk)
    return Action("finished")


def work_finished(campaign_id: int) -> bool:
    return next_action(_load(campaign_id)).name == "finished"


def evosyn_advance(
    *, campaign_id: int, ticket: str | None = None, schedule: bool = False
) -> StepReport:
    """Advance the campaign by one action through the shared runner (evolution.streams)."""
    return runner.advance(kind=KIND_NAME, stream_id=campaign_id, ticket=ticket, schedule=schedule)


# --------------------------------------------------------------------------- sandbox budget


def _reserve(ctx: Ctx, executions: int) -> None:
    """Raise SandboxBudgetReached before a batch that would overspend the campaign's budget."""
    used = EvoSynCampaign.objects.values_list("sandbox_executions", flat=True).get(pk=ctx.esc.pk)
    if used + executions > ctx.settings.max_sandbox_executions:
        raise SandboxBudgetReached(
            f"sandbox executions: {used} used, {executions} more needed, "
            f"budget {ctx.settings.max_sandbox_executions}"
        )


def _spend(ctx: Ctx, executions: int) -> None:
    if executions:
        EvoSynCampaign.objects.filter(pk=ctx.esc.pk).update(
            sandbox_executions=F("sandbox_executions") + executions
        )


# --------------------------------------------------------------------------- instance actions


def _instance_key(inst: Instance) -> str:
    origin = inst.problem.origin_id or inst.problem.public_id
    if inst.role == InstanceRole.SEED:
        return f"seed={origin}"
    return f"synth={inst.slot}"


def _solve(ctx: Ctx, action: Action) -> None:
    """Sample the missing solutions; each one is stored as soon as it arrives."""
    inst = Instance.objects.select_related("problem").get(pk=action.instance_id)
    have = set(inst.solutions.values_list("index", flat=True))
    messages, template = P.solution_messages(statement=inst.statement, entry_point=inst.entry_point)
    for index in range(ctx.settings.solutions_per_problem):
        if index in have:
            continue
        code, error, call_id = "", "", None
        try:
            answer = ctx.chat(
                "solver",
                messages,
                template,
                key=f"{_instance_key(inst)};solution={index}",
                temperature=ctx.settings.solution_temperature,
            )
            call_id = answer.call_id
            code = P.parse_solution(answer.content)
        except ParseError as exc:
            error = f"unparsable answer: {exc}"
            mark_unparsable(call_id, str(exc))
        except BudgetExhausted:
            raise
        except LLMError as exc:
            error = f"model call failed: {exc}"[:1000]
        with contextlib.suppress(IntegrityError), transaction.atomic():
            Solution.objects.create(
                instance=inst,
                index=index,
                code=code,
                code_sha=pruning.code_sha(code) if code else "",
                error=error,
                call_id=call_id,
            )


def _write_tests(ctx: Ctx, action: Action) -> None:
    """One test-writer call (the document's Figure 6 prompt); new tests are appended up to N,
    duplicates of an earlier input dropped."""
    inst = Instance.objects.select_related("problem").get(pk=action.instance_id)
    call_no = inst.test_calls_made
    existing = list(inst.tests.values_list("index", "input"))
    wanted = ctx.settings.tests_per_problem - len(existing)
    messages, template = P.testing_messages(
        statement=inst.statement, entry_point=inst.entry_point, count=wanted
    )
    tests: list[dict] = []
    try:
        answer = ctx.chat(
            "test_writer",
            messages,
            template,
            key=f"{_instance_key(inst)};tests={call_no}",
            temperature=ctx.settings.test_temperature,
        )
        try:
            tests = P.parse_tests(answer.content)
        except ParseError as exc:
            mark_unparsable(answer.call_id, str(exc))
    except BudgetExhausted:
        raise
    except LLMError as exc:
        log.info("test writer call failed for instance %s: %s", inst.pk, exc)
    seen = {i for _, i in existing}
    next_index = max((i for i, _ in existing), default=-1) + 1
    with transaction.atomic():
        # The conditional UPDATE makes a concurrent rerun of the same call a no-op.
        if not Instance.objects.filter(pk=inst.pk, test_calls_made=call_no).update(
            test_calls_made=call_no + 1
        ):
            return
        for test in tests:
            if next_index >= ctx.settings.tests_per_problem:
                break
            if test["input"] in seen:
                continue
            seen.add(test["input"])
            TestItem.objects.create(
                instance=inst,
                index=next_index,
                input=test["input"],
                output=test["output"],
                call=call_no,
            )
            next_index += 1


def _suite_sha(payload) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _verdict_row(
    ctx: Ctx, code: str, specs: list[sandbox.TestSpec], *, harness: str, entry_point: str
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
        }
    )
    code_key = hashlib.sha256(code.encode()).hexdigest()
    cached = MatrixRow.objects.filter(code_sha=code_key, suite_sha=suite).first()
    if cached is not None:
        return list(cached.verdicts), 0
    result = sandbox.judge(code, specs, harness=harness, limits=limits, entry_point=entry_point)
    if result.verdict == "SE":
        raise SandboxFailure(f"sandbox failure: {result.to_dict()['tests'][:1]}")
    verdicts = [t.verdict for t in result.tests]
    verdicts += [result.verdict] * (len(specs) - len(verdicts))
    with contextlib.suppress(IntegrityError), transaction.atomic():
        MatrixRow.objects.create(code_sha=code_key, suite_sha=suite, verdicts=verdicts)
    return verdicts, len(specs)


def _execute(ctx: Ctx, action: Action) -> None:
    """The M x N matrix (every solution with code against every test), cached per solution
    and suite; for a seed also each solution's verdict on the human tests."""
    inst = Instance.objects.select_related("problem").get(pk=action.instance_id)
    solutions = [s for s in inst.solutions.order_by("index") if s.code]
    tests = list(inst.tests.order_by("index"))
    give_up = InstanceStatus.UNUSABLE if inst.role == InstanceRole.SEED else InstanceStatus.PRUNED
    if len(solutions) < 2 or not tests:
        unit_transition(
            KIND_NAME,
            Instance.objects.filter(pk=inst.pk),
            source=InstanceStatus.PENDING,
            target=give_up,
            status_reason=(
                f"too little to rank: {len(solutions)} solution(s) with code, {len(tests)} test(s)"
            ),
        )
        return
    specs = [sandbox.TestSpec(input=t.input, output=t.output) for t in tests]
    human_specs = []
    if inst.role == InstanceRole.SEED:
        human_specs = [
            sandbox.TestSpec(input=t.input, output=t.output)
            for t in inst.problem.tests.order_by("tier", "ordinal")
        ]
    _reserve(ctx, len(solutions) * (len(specs) + len(human_specs)))
    rows, verdicts, human = [], [], []
    spent = 0
    try:
        for sol in solutions:
            row, used = _verdict_row(
                ctx, sol.code, specs, harness="function", entry_point=inst.entry_point
            )
            spent += used
            verdicts.append(row)
            rows.append([1 if v == "AC" else 0 for v in row])
            if human_specs:
                hrow, used = _verdict_row(
                    ctx,
                    sol.code,
                    human_specs,
                    harness=inst.problem.harness,
                    entry_point=inst.problem.entry_point,
                )
                spent += used
                human.append(all(v == "AC" for v in hrow))
    finally:
        _spend(ctx, spent)
    unit_transition(
        KIND_NAME,
        Instance.objects.filter(pk=inst.pk),
        source=InstanceStatus.PENDING,
        target=InstanceStatus.READY,
        matrix={
            "solutions": [s.index for s in solutions],
            "tests": [t.index for t in tests],
            "rows": rows,
            "verdicts": verdicts,
        },
        human=human if human_specs else None,
    )


# --------------------------------------------------------------------------- strategy search


def _seed_matrices(ctx: Ctx) -> list[Instance]:
    return list(
        ctx.esc.instances.filter(role=InstanceRole.SEED, status=InstanceStatus.READY).order_by(
            "slot"
        )
    )


def strategy_evaluate(ctx: Ctx, code: str) -> tuple[S.Evaluation, str]:
    """Score ``code`` on every ready seed instance: (evaluation, MAP-Elites cell)."""
    seeds = _seed_matrices(ctx)
    matrices = [i.matrix["rows"] for i in seeds]
    _reserve(ctx, len(matrices))
    results = S.run_strategy(
        code,
        matrices,
        [len(i.matrix["tests"]) for i in seeds],
        run_batch=sandbox.run_batch,
        limits=ctx.strategy_limits,
    )
    _spend(ctx, len(matrices))
    checks = []
    for inst, matrix, result in zip(seeds, matrices, results, strict=True):
        if isinstance(result, S.StrategyFailure):
            checks.append(S.InstanceCheck(inst.slot, False, False, error=str(result)[:500]))
        else:
            checks.append(S.check_instance(inst.slot, result, matrix=matrix, human=inst.human))
    evaluation = S.evaluate(checks)
    cell = search.features(code, evaluation.checks, matrices, ctx.settings.feature_bins)
    return evaluation, cell


def _evolve(ctx: Ctx, action: Action) -> None:
    """One iteration of the search. Iteration 0 scores the initial strategy; later ones ask the
    strategist to improve an island's elite. Failures of the program score 0 and are kept."""
    s, iteration = ctx.settings, action.number
    rng = random.Random(f"{ctx.esc.pk}:{iteration}")
    parent, island, call_id, error = None, 0, None, ""
    archive = ctx.esc.archive or search.empty_archive(s.num_islands)
    if iteration == 0:
        code = S.INITIAL_STRATEGY
    else:
        island = (iteration - 1) % s.num_islands
        elite = search.choose_parent(
            archive, island, exploitation_ratio=s.exploitation_ratio, rng=rng
        )
        parent = Strategy.objects.get(pk=elite.strategy_id) if elite else ctx.esc.best_strategy
        if parent is None:
            # Nothing placed yet (the initial strategy failed on every seed): the strategist
            # improves the initial program itself, as its score-0 record shows.
            parent = ctx.esc.strategies.get(iteration=0)
        others = [
            Strategy.objects.get(pk=e.strategy_id)
            for e in search.inspirations(archive, island, elite)
        ]
        messages, template = P.strategy_messages(
            parent={
                "code": parent.code,
                "score": parent.score,
                "criterion1": parent.criterion1,
                "criterion2": parent.criterion2,
            },
            inspirations=[{"code": o.code, "score": o.score} for o in others],
        )
        code = ""
        try:
            answer = ctx.chat(
                "strategist",
                messages,
                template,
                key=f"iteration={iteration}",
                temperature=s.strategist_temperature,
            )
            call_id = answer.call_id
            code = P.parse_strategy(answer.content)
        except ParseError as exc:
            error = f"unparsable answer: {exc}"
            mark_unparsable(call_id, str(exc))
        except BudgetExhausted:
            raise
        except LLMError as exc:
            error = f"model call failed: {exc}"[:1000]
    if code:
        evaluation, cell = strategy_evaluate(ctx, code)
        status = evaluation.status
        if status == StrategyStatus.FAILED:
            error = evaluation.checks[0]["error"] if evaluation.checks else "no seed instance"
    else:
        evaluation, cell, status = S.evaluate([]), "", StrategyStatus.UNPARSABLE
    with transaction.atomic():
        esc = EvoSynCampaign.objects.select_for_update().get(pk=ctx.esc.pk)
        if esc.strategies.filter(iteration=iteration).exists():
            return  # stored by an earlier attempt whose commit we did not see
        best = esc.best_strategy
        strategy = Strategy.objects.create(
            evosyn=esc,
            version=esc.strategies.count() + 1,
            iteration=iteration,
            island=island,
            parent=parent,
            code=code,
            status=status,
            error=error[:4000],
            score=evaluation.score,
            criterion1=evaluation.criterion1_rate,
            criterion2=evaluation.criterion2_rate,
            cell=cell,
            best_so_far=max(evaluation.score, best.score if best else 0.0),
            evaluation=evaluation.to_dict(),
            call_id=call_id,
        )
        archive = esc.archive or search.empty_archive(s.num_islands)
        placed = False
        if status in (StrategyStatus.OK, StrategyStatus.PARTIAL):
            elite = search.Elite(strategy.pk, strategy.score, cell)
            targets = range(len(archive["islands"])) if iteration == 0 else [island]
            for target in targets:
                placed = search.insert(archive, target, elite) or placed
        if iteration and iteration % s.migration_interval == 0:
            search.migrate(archive, iteration)
        # Strictly better replaces the best: the earliest program wins a tie (versioned).
        new_best = best is None or (placed and strategy.score > best.score)
        esc.archive = archive
        if new_best and status in (StrategyStatus.OK, StrategyStatus.PARTIAL):
            esc.best_strategy = strategy
        esc.save(update_fields=["archive", "best_strategy", "updated_at"])
        if placed:
            Strategy.objects.filter(pk=strategy.pk).update(placed=True)


# --------------------------------------------------------------------------- synthesis


def _synthesize(ctx: Ctx, action: Action) -> None:
    """One new problem, two seeds as in-context examples; a near-duplicate of a seed or of an
    earlier synthesized problem is recorded as pruned."""
    slot = action.number
    seeds = list(
        ctx.esc.instances.filter(role=InstanceRole.SEED).select_related("problem").order_by("slot")
    )
    examples = [seeds[(slot + k) % len(seeds)] for k in range(min(2, len(seeds)))]
    messages, template = P.synthesize_messages(examples=[e.statement for e in examples])
    fields = {"status": InstanceStatus.PENDING, "status_reason": ""}
    try:
        answer = ctx.chat(
            "synthesizer",
            messages,
            template,
            key=f"synth={slot}",
            temperature=ctx.settings.synth_temperature,
        )
        try:
            fields.update(P.parse_problem(answer.content))
        except ParseError as exc:
            mark_unparsable(answer.call_id, str(exc))
            fields.update(status=InstanceStatus.PRUNED, status_reason=f"unparsable problem: {exc}")
    except BudgetExhausted:
        raise
    except LLMError as exc:
        fields.update(status=InstanceStatus.PRUNED, status_reason=f"model call failed: {exc}")
    if fields["status"] == InstanceStatus.PENDING:
        earlier = {f"seed {i.problem.origin_id or i.problem.public_id}": i.statement for i in seeds}
        earlier.update(
            {
                f"synthesized {i.slot}": i.statement
                for i in ctx.esc.instances.filter(role=InstanceRole.SYNTHETIC).exclude(statement="")
            }
        )
        dup = judge_stage.near_duplicate(
            fields["statement"], earlier, ctx.settings.duplicate_threshold
        )
        if dup.duplicate:
            fields.update(
                status=InstanceStatus.PRUNED,
                status_reason=f"near-duplicate of {dup.against} (similarity {dup.score:.2f})",
            )
    with contextlib.suppress(IntegrityError), transaction.atomic():
        Instance.objects.create(
            evosyn=ctx.esc,
            role=InstanceRole.SYNTHETIC,
            slot=slot,
            problem=examples[0].problem,
            **fields,
        )


def _filter(ctx: Ctx, action: Action) -> None:
    """Apply the best strategy: prune identical solutions, zero variance, unsolvable or a
    failing strategy (reasons recorded); keep the rest as a Problem with the selected tests
    and the strongest solution."""
    inst = Instance.objects.select_related("problem").get(pk=action.instance_id)
    strategy = ctx.esc.best_strategy
    code = strategy.code if strategy else S.INITIAL_STRATEGY
    solutions = {s.index: s for s in inst.solutions.all()}
    tests = {t.index: t for t in inst.tests.all()}
    rows = inst.matrix["rows"]
    sol_order, test_order = inst.matrix["solutions"], inst.matrix["tests"]

    def prune(reason: str, ranking: dict | None = None) -> None:
        unit_transition(
            KIND_NAME,
            Instance.objects.filter(pk=inst.pk),
            source=InstanceStatus.READY,
            target=InstanceStatus.PRUNED,
            status_reason=reason,
            ranking=ranking or {},
        )

    reason = pruning.identical_solutions_reason([solutions[i].code for i in sol_order])
    if reason:
        return prune(reason)
    _reserve(ctx, 1)
    (result,) = S.run_strategy(
        code, [rows], [len(test_order)], run_batch=sandbox.run_batch, limits=ctx.strategy_limits
    )
    _spend(ctx, 1)
    if isinstance(result, S.StrategyFailure):
        return prune(f"strategy v{strategy.version if strategy else 1} failed: {result}"[:2000])
    ranking = {
        "strategy_version": strategy.version if strategy else None,
        "solutions": [sol_order[i] for i in result.solutions],
        "tests": [test_order[j] for j in result.tests],
        "test_scores": result.test_scores,
    }
    reason = pruning.zero_variance_reason(rows, result.test_scores)
    if reason:
        return prune(reason, ranking)
    top = result.solutions[0]
    selected = [j for j in result.tests if rows[top][j]][: ctx.settings.selected_tests]
    if not selected:
        return prune("unsolvable: the top-ranked solution passes none of the tests", ranking)
    strongest = solutions[sol_order[top]]
    ranking.update(
        strongest_solution=strongest.index, selected_tests=[test_order[j] for j in selected]
    )
    with transaction.atomic():
        if not unit_transition(
            KIND_NAME,
            Instance.objects.filter(pk=inst.pk),
            source=InstanceStatus.READY,
            target=InstanceStatus.KEPT,
            ranking=ranking,
            status_reason="",
        ):
            return
        inst.ranking = ranking
        problem = _kept_problem(ctx, inst, strongest, [tests[test_order[j]] for j in selected])
        Instance.objects.filter(pk=inst.pk).update(kept_problem=problem)


def _output_set(ctx: Ctx) -> ProblemSet:
    esc = EvoSynCampaign.objects.select_for_update().get(pk=ctx.esc.pk)
    if esc.output_set_id:
        return esc.output_set
    problem_set, _ = ProblemSet.objects.get_or_create(
        name=f"evosyn-{esc.pk}: {ctx.campaign.name}"[:120],
        defaults={
            "description": "Problems kept by an EvoSyn campaign (selected tests, strongest "
            "solution).",
            "source": METHOD,
        },
    )
    esc.output_set = problem_set
    esc.save(update_fields=["output_set", "updated_at"])
    return problem_set


def _kept_problem(ctx: Ctx, inst: Instance, strongest: Solution, selected: list) -> Problem:
    seed = inst.problem
    root = seed.lineage_root or seed
    problem = Problem.objects.create(
        title=inst.title or inst.entry_point,
        statement=inst.statement,
        reference_solution=strongest.code,
        harness="function",
        entry_point=inst.entry_point,
        time_limit_s=ctx.settings.execution_time_s,
        memory_mb=ctx.settings.memory_mb,
        kind=ProblemKind.SYNTHESIZED,
        method=METHOD,
        origin_dataset=root.origin_dataset,
        metadata={
            "campaign": ctx.campaign.pk,
            "instance": inst.pk,
            "strategy_version": inst.ranking.get("strategy_version")
            if isinstance(inst.ranking, dict)
            else None,
            "solutions": len(inst.matrix["solutions"]),
            "candidate_tests": len(inst.matrix["tests"]),
            "selected_tests": len(selected),
        },
        parent=seed,
        lineage_root=root,
        lineage_depth=seed.lineage_depth + 1,
    )
    rows = []
    for ordinal, test in enumerate(selected):
        row = TestCase(
            problem=problem,
            tier="small",
            ordinal=ordinal,
            hidden=True,
            provenance={"source": "evosyn", "instance": inst.pk, "test": test.index},
        )
        row.input = test.input
        row.output = test.output
        rows.append(row)
    TestCase.objects.bulk_create(rows)
    _output_set(ctx).problems.add(problem)
    return problem


ACTIONS = {
    "solve": _solve,
    "write_tests": _write_tests,
    "execute": _execute,
    "evolve": _evolve,
    "synthesize": _synthesize,
    "filter": _filter,
}


# --------------------------------------------------------------------------- control dataset


@transaction.atomic
def evosyn_control_build(*, campaign_id: int, rng_seed: int = 0, created_by=None) -> ControlSet:
    """The random-test control (the document's D^random): the same kept problems, each with one
    test drawn at random from its N candidates instead of the strategy's selection.
    ValidationError when the campaign kept nothing yet."""
    esc = EvoSynCampaign.objects.get(pk=campaign_id)
    kept = list(
        esc.instances.filter(status=InstanceStatus.KEPT)
        .select_related("kept_problem")
        .order_by("slot")
    )
    if not kept:
        raise ValidationError("This campaign has kept no problem yet: nothing to build from.")
    rng = random.Random(rng_seed)
    items = []
    for inst in kept:
        tests = list(inst.tests.order_by("index"))
        chosen = rng.choice(tests)
        items.append(
            {
                "public_id": inst.kept_problem.public_id if inst.kept_problem else "",
                "title": inst.title,
                "statement": inst.statement,
                "entry_point": inst.entry_point,
                "reference_solution": inst.kept_problem.reference_solution
                if inst.kept_problem
                else "",
                "tests": [{"input": chosen.input, "output": chosen.output, "index": chosen.index}],
            }
        )
    return ControlSet.objects.create(
        evosyn=esc, rng_seed=rng_seed, items=items, created_by=created_by
    )


# --------------------------------------------------------------------------- in-process runner


def evosyn_run_inline(*, campaign_id: int, max_steps: int | None = None, on_progress=None):
    """Drive the campaign in this process (the demo, `run_campaign --inline`, tests) until it
    finished, is paused or cancelled, or ``max_steps`` steps ran (it then stays running)."""
    return runner.run_inline(campaign_id=campaign_id, max_steps=max_steps, on_progress=on_progress)
