"""Writes of FrontierSmith campaigns: creation, the step machine, round barriers and accepted
problems fed back into the seed pool.

One campaign is one stream of work advanced one action at a time by ``frontier_advance``: the
caller claims the campaign row with a conditional UPDATE (a lease), the next action is worked
out from the rows alone (``next_action``), and its result is stored before the lease is
released. Answers are stored as they arrive (one sampled solution, one pair verdict, one build
attempt per action), and unique keys (round, index), (campaign, problem) make a rerun after a
crash continue instead of duplicating.

A round: propose B candidates (seed x operator, round-robin over the pool) -> coarse filter ->
n sampled solutions -> pairwise judge (model-judged divergence) -> keep the top N_div ->
generator and verifier built against each other, dropped after ``max_build_attempts`` ->
score vectors (execution divergence) -> keep the top N_final, which become Problems and join
the seed pool for the next round.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from evolution import sandbox
from evolution.llm import CallContext, LLMClient, mark_unparsable
from evolution.llm.parsing import extract_code
from evolution.models import Campaign, ModelEndpoint, Problem, ProblemSet, TestCase
from evolution.models.campaigns import CampaignKind
from evolution.models.problems import Harness, ProblemKind
from evolution.sandbox import scoring
from evolution.streams import runner
from evolution.streams.errors import SandboxFailure
from evolution.streams.kinds import unit_transition
from evolution.streams.runner import StepReport

from .config import FrontierSettings
from .engine import divergence, environment, formulation, prompts
from .models import (
    CandidateDecision,
    CandidateStage,
    FilterProbe,
    FrontierCampaign,
    FrontierCandidate,
    FrontierRound,
    SeedFormulation,
)

log = logging.getLogger(__name__)
METHOD = KIND_NAME = "frontiersmith"


# --------------------------------------------------------------------------- creation


@transaction.atomic
def frontier_campaign_create(
    *,
    name: str,
    seed_set: ProblemSet,
    mutator_endpoint: ModelEndpoint,
    solver_endpoint: ModelEndpoint,
    settings: dict | None = None,
    seed_limit: int | None = None,
    calibration_closed: ProblemSet | None = None,
    calibration_open: ProblemSet | None = None,
    budget_max_calls: int | None = None,
    budget_max_tokens: int | None = None,
    budget_max_cost=None,
    created_by=None,
) -> Campaign:
    """Validate the settings (ValidationError names each bad key) and create a draft campaign
    of kind "frontiersmith" with its own seed pool (a copy of ``seed_set``'s first
    ``seed_limit`` problems, grown by accepted problems) and output set."""
    if not name.strip():
        raise ValidationError({"name": ["a campaign needs a name"]})
    validated = FrontierSettings.from_dict(settings)
    seeds = list(seed_set.problems.order_by("id"))
    if seed_limit:
        seeds = seeds[:seed_limit]
    if not seeds:
        raise ValidationError({"seed_set": [f"seed set {seed_set.name!r} has no problems"]})
    endpoints = [mutator_endpoint, solver_endpoint]
    campaign = Campaign.objects.create(
        name=name.strip(),
        kind=CampaignKind.FRONTIERSMITH,
        seed_set=seed_set,
        seed_limit=seed_limit,
        role_endpoints={"mutator": mutator_endpoint.pk, "solver": solver_endpoint.pk},
        settings=validated.to_dict(),
        budget_max_calls=budget_max_calls,
        budget_max_tokens=budget_max_tokens,
        budget_max_cost=budget_max_cost,
        replayed=all(e.is_replay for e in endpoints),
        created_by=created_by,
    )
    pool = ProblemSet.objects.create(
        name=f"frontiersmith-{campaign.pk}-pool",
        description=f"Seed pool of FrontierSmith campaign {campaign.name!r}: its seeds and "
        "every accepted problem, fed back each round.",
        source=METHOD,
    )
    pool.problems.set(seeds)
    output = ProblemSet.objects.create(
        name=f"frontiersmith-{campaign.pk}-accepted",
        description=f"Open-ended problems accepted by FrontierSmith campaign {campaign.name!r}.",
        source=METHOD,
    )
    FrontierCampaign.objects.create(
        campaign=campaign,
        mutator_endpoint=mutator_endpoint,
        solver_endpoint=solver_endpoint,
        seed_pool=pool,
        output_set=output,
        calibration_closed=calibration_closed,
        calibration_open=calibration_open,
    )
    return campaign


# --------------------------------------------------------------------------- the step machine


@dataclass(frozen=True)
class Action:
    name: str
    candidate_id: int | None = None
    problem_id: int | None = None
    label: str = ""
    index: int | None = None


@dataclass
class Ctx:
    fc: FrontierCampaign
    settings: FrontierSettings

    def chat(self, endpoint, messages, *, template, key, temperature) -> tuple[str, int]:
        client = LLMClient(endpoint, CallContext(campaign_id=self.fc.pk))
        result = client.chat(
            messages,
            role=template.role,
            template=template.name,
            template_version=template.version,
            replay_key=f"frontier;{key};role={template.role}",
            temperature=temperature,
        )
        return result.content, result.call_id

    @property
    def limits(self) -> sandbox.Limits:
        return sandbox.Limits(
            time_s=self.settings.execution_timeout, memory_mb=self.settings.memory_mb
        )


def _load(campaign_id: int) -> Ctx:
    fc = FrontierCampaign.objects.select_related("campaign").get(pk=campaign_id)
    return Ctx(fc=fc, settings=FrontierSettings.from_dict(fc.campaign.settings))


def _probes_wanted(fc: FrontierCampaign) -> list[tuple[str, int]]:
    wanted = []
    for label, problem_set in (
        (FilterProbe.Label.CLOSED, fc.calibration_closed),
        (FilterProbe.Label.OPEN, fc.calibration_open),
    ):
        if problem_set is not None:
            wanted += [
                (label, pid)
                for pid in problem_set.problems.order_by("id").values_list("id", flat=True)
            ]
    return wanted


def work_finished(fc: FrontierCampaign, settings: FrontierSettings) -> bool:
    return fc.current_round > settings.rounds


def _proposal(pool: list[int], index: int) -> tuple[int, str]:
    """Candidate ``index`` of a round mutates pool problem (index // 3) with the operator
    index % 3: every seed gets each operator before the next seed is used again."""
    ops = formulation.OPERATOR_ORDER
    return pool[(index // len(ops)) % len(pool)], ops[index % len(ops)]


def next_action(ctx: Ctx) -> Action:
    """The next thing to do, from the rows alone (so a rerun after a crash picks up here)."""
    fc, s = ctx.fc, ctx.settings
    done = set(fc.probes.values_list("label", "problem_id"))
    for label, pid in _probes_wanted(fc):
        if (label, pid) not in done:
            return Action("calibrate", problem_id=pid, label=label)
    if work_finished(fc, s):
        return Action("finished")
    rnd = fc.rounds.filter(number=fc.current_round).first()
    if rnd is None:
        return Action("start_round")
    candidates = list(fc.candidates.filter(round=rnd.number).order_by("index"))
    if len(candidates) < s.budget_candidates:
        index = len(candidates)
        if {c.index for c in candidates} != set(range(index)):
            index = min(set(range(s.budget_candidates)) - {c.index for c in candidates})
        pid, _ = _proposal(rnd.pool, index)
        if not fc.formulations.filter(problem_id=pid).exists():
            return Action("extract", problem_id=pid)
        return Action("mutate", index=index)
    pairs_needed = len(divergence.pairs(s.solutions_per_candidate))
    for c in candidates:
        if c.decision:
            continue
        if c.stage == CandidateStage.PROPOSED:
            return Action("filter", candidate_id=c.pk)
        if c.stage == CandidateStage.FILTERED:
            if len(c.solutions) < s.solutions_per_candidate:
                return Action("sample", candidate_id=c.pk)
            if len(c.pair_verdicts) < pairs_needed:
                return Action("pair", candidate_id=c.pk)
            return Action("judged", candidate_id=c.pk)
    if not rnd.div_selected:
        return Action("select_div")
    for c in candidates:
        if not c.decision and c.stage == CandidateStage.BUILDING:
            return Action("build", candidate_id=c.pk)
    return Action("select_final")


def frontier_advance(
    *, campaign_id: int, ticket: str | None = None, schedule: bool = False
) -> StepReport:
    """Advance the campaign by one action through the shared runner (evolution.streams)."""
    return runner.advance(kind=KIND_NAME, stream_id=campaign_id, ticket=ticket, schedule=schedule)


# --------------------------------------------------------------------------- actions


def _decide(candidate_id: int, decision: str, reason: str) -> None:
    FrontierCandidate.objects.filter(pk=candidate_id, decision="").update(
        decision=decision, decision_reason=reason[:4000], stage=CandidateStage.DONE
    )


def _filter_verdict(ctx: Ctx, statement: str, key: str) -> tuple[bool | None, dict]:
    """The coarse filter: accepted only when all three criteria hold. None: unusable answer."""
    template = prompts.load("filter")
    content, call_id = ctx.chat(
        ctx.fc.mutator_endpoint,
        template.messages(statement=statement),
        template=template,
        key=key,
        temperature=ctx.settings.judge_temperature,
    )
    try:
        data = formulation._json(content)
    except formulation.ParseProblem as exc:
        mark_unparsable(call_id, str(exc))
        return None, {"error": str(exc)}
    criteria = {k: data.get(k) for k in ("objective", "strategies", "scoring")}
    if not all(isinstance(v, bool) for v in criteria.values()):
        reason = "the filter's answer lacks a boolean objective / strategies / scoring"
        mark_unparsable(call_id, reason)
        return None, {"error": reason}
    verdict = {**criteria, "reason": str(data.get("reason", ""))[:1000]}
    return all(criteria.values()), verdict


def _calibrate(ctx: Ctx, action: Action) -> None:
    problem = Problem.objects.get(pk=action.problem_id)
    accepted, verdict = _filter_verdict(
        ctx, problem.statement, f"calibrate={action.label};problem={problem.public_id}"
    )
    FilterProbe.objects.get_or_create(
        frontier=ctx.fc,
        problem=problem,
        label=action.label,
        defaults={"accepted": accepted, "verdict": verdict},
    )


def _start_round(ctx: Ctx, action: Action) -> None:
    pool = list(ctx.fc.seed_pool.problems.order_by("id").values_list("id", flat=True))
    if not pool:
        raise ValueError("the seed pool is empty")
    FrontierRound.objects.get_or_create(
        frontier=ctx.fc, number=ctx.fc.current_round, defaults={"pool": pool}
    )


def _extract(ctx: Ctx, action: Action) -> None:
    problem = Problem.objects.get(pk=action.problem_id)
    template = prompts.load("extract")
    content, call_id = ctx.chat(
        ctx.fc.mutator_endpoint,
        template.messages(statement=problem.statement),
        template=template,
        key=f"extract={problem.public_id}",
        temperature=ctx.settings.mutation_temperature,
    )
    try:
        parsed = formulation.parse_formulation(content)
        fields = {**parsed.to_dict(), "error": ""}
    except formulation.ParseProblem as exc:
        mark_unparsable(call_id, str(exc))
        fields = {"error": f"formulation not extracted: {exc}"}
    SeedFormulation.objects.get_or_create(frontier=ctx.fc, problem=problem, defaults=fields)


def _candidate_create(ctx: Ctx, index: int, *, decision: str = "", reason: str = "", **fields):
    rnd = ctx.fc.rounds.get(number=ctx.fc.current_round)
    pid, operator = _proposal(rnd.pool, index)
    try:
        with transaction.atomic():
            return FrontierCandidate.objects.create(
                frontier=ctx.fc,
                round=rnd.number,
                index=index,
                parent_id=pid,
                operator=operator,
                decision=decision,
                decision_reason=reason,
                stage=CandidateStage.DONE if decision else CandidateStage.PROPOSED,
                **fields,
            )
    except IntegrityError:
        return None  # made by an earlier attempt of this step: never a duplicate


def _mutate(ctx: Ctx, action: Action) -> None:
    rnd = ctx.fc.rounds.get(number=ctx.fc.current_round)
    pid, operator = _proposal(rnd.pool, action.index)
    seed = SeedFormulation.objects.select_related("problem").get(frontier=ctx.fc, problem_id=pid)
    if not seed.ok:
        _candidate_create(
            ctx, action.index, decision=CandidateDecision.UNPARSABLE, reason=seed.error
        )
        return
    template = prompts.load("mutate")
    content, call_id = ctx.chat(
        ctx.fc.mutator_endpoint,
        template.messages(
            **seed.as_dict(),
            statement=seed.problem.statement,
            operator_text=formulation.OPERATORS[operator][1],
        ),
        template=template,
        key=f"round={rnd.number};c={action.index};seed={seed.problem.public_id};op={operator}",
        temperature=ctx.settings.mutation_temperature,
    )
    parent = formulation.Formulation(**seed.as_dict())
    try:
        mutation = formulation.parse_mutation(content, operator=operator, parent=parent)
    except formulation.ParseProblem as exc:
        mark_unparsable(call_id, str(exc))
        _candidate_create(
            ctx,
            action.index,
            decision=CandidateDecision.UNPARSABLE,
            reason=str(exc),
            parent_formulation=parent.to_dict(),
        )
        return
    _candidate_create(
        ctx,
        action.index,
        parent_formulation=parent.to_dict(),
        formulation=mutation.formulation.to_dict(),
        title=mutation.title,
        statement=mutation.statement,
        objective=mutation.objective,
        direction=mutation.direction,
    )


def _key(c: FrontierCandidate) -> str:
    return f"round={c.round};c={c.index}"


def _filter(ctx: Ctx, action: Action) -> None:
    c = FrontierCandidate.objects.get(pk=action.candidate_id)
    accepted, verdict = _filter_verdict(ctx, c.statement, _key(c))
    if accepted:
        unit_transition(
            KIND_NAME,
            FrontierCandidate.objects.filter(pk=c.pk),
            source=CandidateStage.PROPOSED,
            target=CandidateStage.FILTERED,
            filter_passed=True,
            filter_verdict=verdict,
        )
        return
    FrontierCandidate.objects.filter(pk=c.pk).update(filter_passed=False, filter_verdict=verdict)
    failed = [k for k in ("objective", "strategies", "scoring") if verdict.get(k) is False]
    reason = (
        f"coarse filter: no {', no '.join(failed)}. {verdict.get('reason', '')}"
        if failed
        else f"coarse filter answer unusable: {verdict.get('error', '')}"
    )
    _decide(c.pk, CandidateDecision.FILTERED_OUT, reason.strip())


def _sample(ctx: Ctx, action: Action) -> None:
    c = FrontierCandidate.objects.get(pk=action.candidate_id)
    i = len(c.solutions)
    template = prompts.load("solve")
    content, call_id = ctx.chat(
        ctx.fc.solver_endpoint,
        template.messages(statement=c.statement),
        template=template,
        key=f"{_key(c)};sample={i}",
        temperature=ctx.settings.solver_temperature,
    )
    try:
        code = extract_code(content)
    except Exception as exc:  # ParseError: a sample without code takes no part in divergence
        mark_unparsable(call_id, str(exc))
        code = ""
    # Append only if nobody appended in between (the lease makes that rare, this makes it safe).
    FrontierCandidate.objects.filter(pk=c.pk, solutions=c.solutions).update(
        solutions=[*c.solutions, code]
    )


def _pair(ctx: Ctx, action: Action) -> None:
    c = FrontierCandidate.objects.get(pk=action.candidate_id)
    i, j = next(
        (i, j)
        for i, j in divergence.pairs(ctx.settings.solutions_per_candidate)
        if f"{i}-{j}" not in c.pair_verdicts
    )
    value = None
    if c.solutions[i] and c.solutions[j]:
        template = prompts.load("pair_judge")
        content, call_id = ctx.chat(
            ctx.fc.mutator_endpoint,
            template.messages(statement=c.statement, a=c.solutions[i], b=c.solutions[j]),
            template=template,
            key=f"{_key(c)};pair={i}-{j}",
            temperature=ctx.settings.judge_temperature,
        )
        try:
            data = formulation._json(content)
            if not isinstance(data.get("different"), bool):
                raise formulation.ParseProblem("no boolean 'different'")
            value = 1.0 if data["different"] else 0.0
        except formulation.ParseProblem as exc:
            mark_unparsable(call_id, str(exc))
    with transaction.atomic():
        row = FrontierCandidate.objects.select_for_update().get(pk=c.pk)
        row.pair_verdicts = {**row.pair_verdicts, f"{i}-{j}": value}
        row.save(update_fields=["pair_verdicts", "updated_at"])


def _judged(ctx: Ctx, action: Action) -> None:
    c = FrontierCandidate.objects.get(pk=action.candidate_id)
    value = divergence.judged_divergence(c.pair_verdicts)
    unit_transition(
        KIND_NAME,
        FrontierCandidate.objects.filter(pk=c.pk),
        source=CandidateStage.FILTERED,
        target=CandidateStage.JUDGED,
        judged_divergence=value,
    )


def _round_candidates(ctx: Ctx):
    return FrontierCandidate.objects.filter(frontier=ctx.fc, round=ctx.fc.current_round)


@transaction.atomic
def _select_div(ctx: Ctx, action: Action) -> None:
    rnd = FrontierRound.objects.select_for_update().get(
        frontier=ctx.fc, number=ctx.fc.current_round
    )
    if rnd.div_selected:
        return
    judged = list(_round_candidates(ctx).filter(stage=CandidateStage.JUDGED, decision=""))
    kept = divergence.top(judged, ctx.settings.n_div, key=lambda c: c.judged_divergence)
    kept_ids = {c.pk for c in kept}
    for c in judged:
        if c.pk in kept_ids:
            unit_transition(
                KIND_NAME,
                FrontierCandidate.objects.filter(pk=c.pk),
                source=CandidateStage.JUDGED,
                target=CandidateStage.BUILDING,
            )
        else:
            _decide(
                c.pk,
                CandidateDecision.LOW_DIVERGENCE,
                f"model-judged divergence {c.judged_divergence} is outside the top "
                f"{ctx.settings.n_div} of the round",
            )
    rnd.div_selected = True
    rnd.save(update_fields=["div_selected"])


def _feedback(c: FrontierCandidate) -> str:
    if not c.build_ledger:
        return ""
    last = c.build_ledger[-1]
    lines = "\n".join(f"- {p}" for p in last.get("problems", []))
    return f"\nThe previous attempt disagreed with its counterpart:\n{lines}\nFix this.\n"


def _measure(outcome, verdict) -> environment.Measured:
    if outcome.status != "OK":
        return environment.Measured(None, f"{outcome.status}: {outcome.stderr.strip()[-200:]}")
    if not verdict.ok:
        return environment.Measured(None, f"verifier failed: {verdict.message}")
    if not verdict.feasible:
        return environment.Measured(None, f"infeasible: {verdict.message}")
    return environment.Measured(verdict.objective)


def _build(ctx: Ctx, action: Action) -> None:
    """One round of the test-case generator and verifier built against each other: both are
    (re)written with the other's disagreements, everything runs sandboxed, ``environment.check``
    decides. Converged: the score vectors and execution divergence are stored. Out of
    attempts: dropped."""
    c = FrontierCandidate.objects.get(pk=action.candidate_id)
    s = ctx.settings
    attempt = c.build_attempts + 1
    samples = (
        "\n\n".join(f"```python\n{code}```" for code in c.solutions[:3] if code) or "(none usable)"
    )
    entry: dict = {"attempt": attempt, "problems": []}
    tw, vw = prompts.load("test_writer"), prompts.load("verifier_writer")
    feedback = _feedback(c)
    tw_text, tw_call = ctx.chat(
        ctx.fc.solver_endpoint,
        tw.messages(statement=c.statement, solutions=samples, feedback=feedback),
        template=tw,
        key=f"{_key(c)};attempt={attempt}",
        temperature=ctx.settings.solver_temperature,
    )
    vw_text, vw_call = ctx.chat(
        ctx.fc.solver_endpoint,
        vw.messages(statement=c.statement, direction=c.direction, feedback=feedback),
        template=vw,
        key=f"{_key(c)};attempt={attempt}",
        temperature=ctx.settings.solver_temperature,
    )
    programs: dict[str, str] = {}
    for text, call_id, names in (
        (tw_text, tw_call, environment.TEST_BLOCKS),
        (vw_text, vw_call, environment.VERIFIER_BLOCKS),
    ):
        try:
            programs.update(environment.parse_blocks(text, names))
        except formulation.ParseProblem as exc:
            mark_unparsable(call_id, str(exc))
            entry["problems"].append(str(exc))
    converged = False
    tests: list[dict] = []
    matrix: list[list[float]] = []
    if not entry["problems"]:
        converged, tests, matrix = _run_environment(ctx, c, programs, entry)
    fields = {
        "build_attempts": attempt,
        "build_ledger": [*c.build_ledger, entry],
        **{k: programs.get(k, "") for k in ("generator", "verifier", "baseline", "weak")},
    }
    if converged:
        fields.update(
            tests=tests,
            score_matrix=matrix,
            execution_divergence=divergence.execution_divergence(matrix),
            score_spread=_spread(matrix),
            stage=CandidateStage.EXECUTED,
        )
    FrontierCandidate.objects.filter(pk=c.pk, build_attempts=c.build_attempts).update(**fields)
    if not converged and attempt >= s.max_build_attempts:
        _decide(
            c.pk,
            CandidateDecision.NOT_CONVERGED,
            f"test generator and verifier did not agree after {attempt} attempt(s): "
            + "; ".join(entry["problems"])[:1500],
        )


def _spread(matrix: list[list[float]]) -> float | None:
    means = [sum(row) / len(row) for row in matrix if row]
    return (max(means) - min(means)) if len(means) >= 2 else None


def _run_environment(ctx: Ctx, c: FrontierCandidate, programs: dict, entry: dict):
    s, limits = ctx.settings, ctx.limits
    generated = sandbox.run_batch(
        programs["generator"],
        [f"{seed}\n" for seed in range(1, s.tests_per_candidate + 1)],
        harness="stdio",
        limits=limits,
    )
    problems = []
    inputs: list[str] = []
    for seed, outcome in enumerate(generated, 1):
        if outcome.status != "OK" or not outcome.stdout.strip():
            problems.append(
                f"generator seed {seed}: {outcome.status} {outcome.stderr.strip()[-200:]}".strip()
            )
        elif outcome.stdout in inputs:
            problems.append(f"generator seed {seed}: duplicate input")
        else:
            inputs.append(outcome.stdout)
    if not inputs:
        entry["problems"] = problems or ["the generator produced no input"]
        return False, [], []
    sample_codes = [code for code in c.solutions if code]
    runs = {
        name: sandbox.run_batch(code, inputs, harness="stdio", limits=limits)
        for name, code in [
            ("baseline", programs["baseline"]),
            ("weak", programs["weak"]),
            *((f"sample{i}", code) for i, code in enumerate(sample_codes)),
        ]
    }
    documents, slots = [], []
    for name, outcomes in runs.items():
        for t, outcome in enumerate(outcomes):
            if outcome.status == "OK":
                slots.append((name, t))
                documents.append({"input": inputs[t], "output": outcome.stdout})
    garbage_docs = [{"input": inputs[0], "output": g} for g in environment.GARBAGE_OUTPUTS]
    verdicts = scoring.verify(
        programs["verifier"], documents + garbage_docs, limits=scoring.verifier_limits(limits)
    )
    if any(v.message.startswith("SE:") for v in verdicts):
        raise SandboxFailure("the sandbox failed while running the verifier")
    by_slot = dict(zip(slots, verdicts[: len(documents)], strict=True))
    null = scoring.Verdict(ok=False, message="not run")

    def measured(name):
        return [_measure(o, by_slot.get((name, t), null)) for t, o in enumerate(runs[name])]

    garbage = []
    for v in verdicts[len(documents) :]:
        if v.ok and not v.feasible:
            garbage.append("rejected")
        elif v.ok:
            garbage.append("accepted as feasible")
        else:
            garbage.append(f"crashed: {v.message}")
    obs = environment.Observations(
        direction=c.direction,
        tests=len(inputs),
        baseline=measured("baseline"),
        weak=measured("weak"),
        samples=[measured(f"sample{i}") for i in range(len(sample_codes))],
        garbage_verdicts=garbage,
        generator_problems=problems,
    )
    entry["problems"] = environment.check(obs, min_spread=s.min_objective_spread)
    entry["tests"] = len(inputs)
    if entry["problems"]:
        return False, [], []
    matrix = [
        [
            scoring.relative_score(m.objective, b.objective, c.direction)
            if m.objective is not None
            else 0.0
            for m, b in zip(sample, obs.baseline, strict=True)
        ]
        for sample in obs.samples
    ]
    tests = [
        {"input": inputs[t], "baseline_output": runs["baseline"][t].stdout}
        for t in range(len(inputs))
    ]
    return True, tests, matrix


@transaction.atomic
def _select_final(ctx: Ctx, action: Action) -> None:
    """Keep the top N_final by execution divergence; they become Problems and join the seed
    pool. The round closes and the next one starts from the grown pool."""
    fc = FrontierCampaign.objects.select_for_update().get(pk=ctx.fc.pk)
    rnd = FrontierRound.objects.select_for_update().get(frontier=fc, number=fc.current_round)
    if rnd.closed:
        return
    executed = list(_round_candidates(ctx).filter(stage=CandidateStage.EXECUTED, decision=""))
    kept = divergence.top(executed, ctx.settings.n_final, key=lambda c: c.execution_divergence)
    kept_ids = {c.pk for c in kept}
    for c in executed:
        if c.pk in kept_ids:
            problem = _accepted_problem(ctx, c)
            c.accepted_problem = problem
            c.decision = CandidateDecision.ACCEPTED
            c.decision_reason = (
                f"execution divergence {divergence.describe(c.execution_divergence)} "
                f"within the top {ctx.settings.n_final} of the round"
            )
            c.stage = CandidateStage.DONE
            c.save()
        else:
            _decide(
                c.pk,
                CandidateDecision.LOW_EXEC_DIVERGENCE,
                f"execution divergence {divergence.describe(c.execution_divergence)} "
                f"outside the top {ctx.settings.n_final} of the round",
            )
    rnd.funnel = round_funnel(fc=fc, number=rnd.number)
    rnd.closed = True
    rnd.closed_at = timezone.now()
    rnd.save(update_fields=["funnel", "closed", "closed_at"])
    fc.current_round = rnd.number + 1
    fc.save(update_fields=["current_round", "updated_at"])


def _accepted_problem(ctx: Ctx, c: FrontierCandidate) -> Problem:
    parent = c.parent
    root = parent.lineage_root or parent
    statement = c.statement.rstrip() + "\n\n" + formulation.scoring_rule(c.direction, c.objective)
    problem = Problem.objects.create(
        title=c.title,
        statement=statement,
        reference_solution=c.baseline,
        harness=Harness.STDIO,
        time_limit_s=ctx.settings.execution_timeout,
        memory_mb=ctx.settings.memory_mb,
        comparison={"mode": "score", "verifier": c.verifier, "direction": c.direction},
        kind=ProblemKind.SYNTHESIZED,
        method=METHOD,
        origin_dataset=root.origin_dataset,
        origin_difficulty=root.origin_difficulty,
        metadata={
            "campaign": ctx.fc.pk,
            "frontiersmith": {
                "candidate": c.pk,
                "round": c.round,
                "operator": c.operator,
                "formulation": c.formulation,
                "parent_formulation": c.parent_formulation,
                "objective": c.objective,
                "direction": c.direction,
                "judged_divergence": c.judged_divergence,
                "execution_divergence": c.execution_divergence,
                "score_spread": c.score_spread,
                "generator": c.generator,
                "weak_solution": c.weak,
            },
        },
        parent=parent,
        lineage_root=root,
        lineage_depth=parent.lineage_depth + 1,
    )
    rows = []
    for ordinal, test in enumerate(c.tests):
        # The first test is the public example; the baseline's output is the stored "output"
        # (every score is relative to it).
        row = TestCase(
            problem=problem,
            tier="public" if ordinal == 0 else "medium",
            ordinal=ordinal,
            hidden=ordinal != 0,
            provenance={"generator_seed": ordinal + 1, "output": "baseline"},
        )
        row.input, row.output = test["input"], test["baseline_output"]
        rows.append(row)
    TestCase.objects.bulk_create(rows)
    ctx.fc.seed_pool.problems.add(problem)
    ctx.fc.output_set.problems.add(problem)
    SeedFormulation.objects.get_or_create(
        frontier=ctx.fc,
        problem=problem,
        defaults={k: c.formulation.get(k, "") for k in ("goal", "inputs", "outputs")},
    )
    return problem


ACTIONS = {
    "calibrate": _calibrate,
    "start_round": _start_round,
    "extract": _extract,
    "mutate": _mutate,
    "filter": _filter,
    "sample": _sample,
    "pair": _pair,
    "judged": _judged,
    "select_div": _select_div,
    "build": _build,
    "select_final": _select_final,
}


# --------------------------------------------------------------------------- read models


def round_funnel(*, fc: FrontierCampaign, number: int) -> dict:
    """Counts of a round's funnel: proposed -> parsed -> passed filter -> kept (N_div) ->
    converged -> accepted, plus the yield of the build stage (converged / kept)."""
    qs = FrontierCandidate.objects.filter(frontier=fc, round=number)
    proposed = qs.count()
    parsed = qs.exclude(decision=CandidateDecision.UNPARSABLE).count()
    passed = qs.filter(filter_passed=True).count()
    kept = qs.filter(build_attempts__gt=0).count()
    converged = qs.filter(execution_divergence__isnull=False).count()
    accepted = qs.filter(decision=CandidateDecision.ACCEPTED).count()
    return {
        "proposed": proposed,
        "parsed": parsed,
        "passed_filter": passed,
        "kept_div": kept,
        "converged": converged,
        "accepted": accepted,
        "build_yield": (converged / kept) if kept else None,
    }


# --------------------------------------------------------------------------- in-process runner


def frontier_run_inline(
    *, campaign_id: int, max_steps: int | None = None, on_progress=None
) -> Campaign:
    """Drive the campaign in this process (the demo, `run_campaign --inline`, tests) until it
    finished, is paused or cancelled, or ``max_steps`` steps ran (it then stays running)."""
    return runner.run_inline(campaign_id=campaign_id, max_steps=max_steps, on_progress=on_progress)
