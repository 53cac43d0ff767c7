"""Writes of X-Coder campaigns: creation, and the step machine of SynthSmith (seed document 003).

One sequential stream per campaign, advanced one action at a time by ``xcoder_advance``: the
caller claims the campaign row with a conditional UPDATE (a lease), the next action is worked
out from the rows alone, and its result is stored as it arrives. A worker killed at any instant
loses at most the action in flight; unique constraints (extraction per seed, node per path,
evolution per round and category, task per index, solution per endpoint and sample, problem per
origin id) mean a rerun never duplicates anything.

The stream: extract features from each seed -> merge them into the tree -> evolve the tree in
breadth and depth -> per task: sample a subtree, stage 1 (roles, selection, integration
strategy), stage 2 (stylised statement, then the statement gates and the near-duplicate check),
test inputs (prompted and/or a generator program run sandboxed), candidate solutions from every
solver endpoint (static gates), dual verification (vote, weights, hold-out) -> an accepted
``Problem(kind="synthesized", method="xcoder")`` or a discarded task with its reason.
"""

from __future__ import annotations

import ast
import json
import logging
import random
from collections import Counter
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from evolution import sandbox
from evolution.llm import CallContext, LLMClient, mark_unparsable
from evolution.llm.parsing import ParseError, fenced_blocks
from evolution.models import Campaign, ModelEndpoint, Problem, ProblemSet, TestCase
from evolution.models.campaigns import CampaignKind
from evolution.models.problems import ProblemKind
from evolution.pipeline import difficulty, judge, materialize
from evolution.streams import runner
from evolution.streams.errors import SandboxFailure
from evolution.streams.runner import StepReport

from .config import STYLES, XcoderSettings
from .engine import features as feat
from .engine import gates, prompts, voting
from .models import (
    CandidateSolution,
    EvolutionStep,
    ExtractionStatus,
    FeatureExtraction,
    FeatureNode,
    NodeOrigin,
    SynthTask,
    TaskStatus,
    XcoderCampaign,
)

log = logging.getLogger(__name__)
METHOD = KIND_NAME = "xcoder"
TIERS_BY_WEIGHT = {1: "small", 2: "medium", 3: "large", 4: "stress"}


# --------------------------------------------------------------------------- creation


@transaction.atomic
def xcoder_campaign_create(
    *,
    name: str,
    seed_set: ProblemSet,
    generator_endpoint: ModelEndpoint,
    solver_endpoints: list[ModelEndpoint],
    settings: dict | None = None,
    seed_limit: int | None = None,
    budget_max_calls: int | None = None,
    budget_max_tokens: int | None = None,
    budget_max_cost=None,
    created_by=None,
) -> Campaign:
    """Validate the settings (ValidationError names each bad key) and create a draft campaign of
    kind "xcoder" with its generator and solver endpoints, and the problem set that collects
    its accepted problems."""
    if not name.strip():
        raise ValidationError({"name": ["a campaign needs a name"]})
    validated = XcoderSettings.from_dict(settings)
    solvers = list(solver_endpoints)
    if not solvers:
        raise ValidationError({"solver_endpoints": ["choose at least one solver model"]})
    if len({s.pk for s in solvers}) != len(solvers):
        raise ValidationError({"solver_endpoints": ["a solver model is listed twice"]})
    if len(solvers) * validated.candidates_per_endpoint < validated.min_candidates:
        raise ValidationError(
            {
                "min_candidates": [
                    f"{len(solvers)} solver(s) x {validated.candidates_per_endpoint} candidate(s) "
                    f"cannot reach min_candidates={validated.min_candidates}"
                ]
            }
        )
    seeds = seed_set.problems.exclude(reference_solution="").order_by("id")
    if not seeds.exists():
        raise ValidationError(
            {"seed_set": [f"seed set {seed_set.name!r} has no problem with a reference solution"]}
        )
    campaign = Campaign.objects.create(
        name=name.strip(),
        kind=CampaignKind.XCODER,
        seed_set=seed_set,
        seed_limit=seed_limit,
        evolver=generator_endpoint,
        role_endpoints={"generator": generator_endpoint.pk},
        settings=validated.to_dict(),
        budget_max_calls=budget_max_calls,
        budget_max_tokens=budget_max_tokens,
        budget_max_cost=budget_max_cost,
        replayed=all(e.is_replay for e in [generator_endpoint, *solvers]),
        created_by=created_by,
    )
    problem_set = ProblemSet.objects.create(
        name=f"xcoder-{campaign.pk}: {campaign.name}"[:120],
        description=f"Problems accepted by the X-Coder campaign {campaign.name!r}.",
        source="xcoder",
    )
    xc = XcoderCampaign.objects.create(
        campaign=campaign, generator_endpoint=generator_endpoint, problem_set=problem_set
    )
    xc.solver_endpoints.set(solvers)
    return campaign


# --------------------------------------------------------------------------- the step machine


@dataclass(frozen=True)
class Action:
    name: str  # extract | merge | evolve | close_tree | plan | select | write | tests | solve
    # | verify | finished
    problem_id: int | None = None
    round: int | None = None
    category: str = ""
    task_index: int | None = None
    task_id: int | None = None


@dataclass
class Ctx:
    xc: XcoderCampaign
    settings: XcoderSettings

    @property
    def campaign(self) -> Campaign:
        return self.xc.campaign

    def chat(self, endpoint, messages, *, role, template, key, temperature=None):
        client = LLMClient(endpoint, CallContext(campaign_id=self.xc.pk))
        return client.chat(
            messages,
            role=role,
            template=template.name,
            template_version=template.version,
            replay_key=f"xcoder;{key}",
            temperature=self.settings.temperature if temperature is None else temperature,
        )

    def limits(self) -> sandbox.Limits:
        return sandbox.Limits(
            time_s=self.settings.execution_timeout, memory_mb=self.settings.memory_mb
        )


def _load(campaign_id: int) -> Ctx:
    xc = XcoderCampaign.objects.select_related("campaign", "generator_endpoint").get(pk=campaign_id)
    return Ctx(xc=xc, settings=XcoderSettings.from_dict(xc.campaign.settings))


def seed_problems(campaign: Campaign) -> list[Problem]:
    """The seeds features are extracted from: the seed set's problems with a reference."""
    qs = campaign.seed_set.problems.exclude(reference_solution="").order_by("id")
    return list(qs[: campaign.seed_limit] if campaign.seed_limit else qs)


def tree_categories(xc: XcoderCampaign) -> list[str]:
    return list(
        FeatureNode.objects.filter(xcoder=xc, depth=0)
        .order_by("path")
        .values_list("category", flat=True)
    )


def next_action(ctx: Ctx) -> Action:
    """The next thing to do, from the rows alone (so a rerun after a crash picks up here)."""
    xc, s = ctx.xc, ctx.settings
    done = set(FeatureExtraction.objects.filter(xcoder=xc).values_list("problem_id", flat=True))
    for seed in seed_problems(ctx.campaign):
        if seed.pk not in done:
            return Action("extract", problem_id=seed.pk)
    if not xc.tree_merged:
        return Action("merge")
    evolved = set(EvolutionStep.objects.filter(xcoder=xc).values_list("round", "category"))
    categories = tree_categories(xc)
    for round_no in range(1, s.evolution_rounds + 1):
        for category in categories:
            if (round_no, category) not in evolved:
                return Action("evolve", round=round_no, category=category)
    if not xc.counts_evolved:
        return Action("close_tree")
    tasks = {t.index: t for t in SynthTask.objects.filter(xcoder=xc).only("id", "index", "status")}
    for index in range(s.num_tasks):
        task = tasks.get(index)
        if task is None:
            return Action("plan", task_index=index)
        step = TASK_STEPS.get(task.status)
        if step:
            return Action(step, task_index=index, task_id=task.pk)
    return Action("finished")


TASK_STEPS = {
    TaskStatus.PLANNED: "select",
    TaskStatus.SELECTED: "write",
    TaskStatus.WRITTEN: "tests",
    TaskStatus.TESTED: "solve",
    TaskStatus.SOLVED: "verify",
}


def work_finished(ctx: Ctx) -> bool:
    return next_action(ctx).name == "finished"


def xcoder_advance(
    *, campaign_id: int, ticket: str | None = None, schedule: bool = False
) -> StepReport:
    """Advance the campaign by one action through the shared runner (evolution.streams)."""
    return runner.advance(kind=KIND_NAME, stream_id=campaign_id, ticket=ticket, schedule=schedule)


def xcoder_issue_ticket(*, campaign: Campaign, only_if_quiet: bool) -> str | None:
    return runner.issue_ticket(
        KIND_NAME, campaign.pk, campaign=campaign, only_if_quiet=only_if_quiet
    )


def xcoder_run_inline(
    *, campaign_id: int, max_steps: int | None = None, on_progress=None
) -> Campaign:
    """Run the campaign in this process until it finishes, is paused or cancelled (or
    ``max_steps`` actions): the demo, tests and ``run_campaign --inline``. Starts a queued
    campaign; returns the Campaign (and ``on_progress`` receives it after every step)."""
    return runner.run_inline(campaign_id=campaign_id, max_steps=max_steps, on_progress=on_progress)


# --------------------------------------------------------------------------- the feature tree


def _seed_key(problem: Problem) -> str:
    return problem.origin_id or problem.public_id


def act_extract(ctx: Ctx, action: Action) -> None:
    problem = Problem.objects.get(pk=action.problem_id)
    messages, template = prompts.extraction_messages(
        statement=problem.statement, code=problem.reference_solution
    )
    result = ctx.chat(
        ctx.xc.generator_endpoint,
        messages,
        role="xcoder_extract",
        template=template,
        key=f"extract;seed={_seed_key(problem)}",
    )
    try:
        data = feat.parse_extraction(result.content)
        row = {"status": ExtractionStatus.OK, "features": data}
    except ParseError as exc:
        mark_unparsable(result.call_id, str(exc))
        row = {"status": ExtractionStatus.FAILED, "reason": f"unparsable: {exc}"[:500]}
    with transaction.atomic():
        FeatureExtraction.objects.get_or_create(xcoder=ctx.xc, problem=problem, defaults=row)


def category_counts(xc: XcoderCampaign) -> dict[str, int]:
    """Features per category: every node below the category node."""
    counts = dict.fromkeys(tree_categories(xc), 0)
    for category, n in Counter(
        FeatureNode.objects.filter(xcoder=xc, depth__gt=0).values_list("category", flat=True)
    ).items():
        counts[category] = n
    return counts


def _store_nodes(xc: XcoderCampaign, specs, *, origin: str, round_no: int, source=None) -> int:
    """Create the nodes that do not exist yet (parents first); add ``source`` to existing ones.
    Returns how many were created."""
    existing = {n.path: n for n in FeatureNode.objects.filter(xcoder=xc)}
    created = 0
    for spec in specs:
        node = existing.get(spec.path)
        if node is None:
            node = FeatureNode.objects.create(
                xcoder=xc,
                parent=existing.get(spec.parent_path) if spec.parent_path else None,
                category=spec.category,
                name=spec.name[:200],
                path=spec.path[:1000],
                depth=spec.depth,
                origin=origin,
                evolution_round=round_no,
                sources=[source] if source else [],
            )
            existing[spec.path] = node
            created += 1
        elif source and source not in node.sources:
            node.sources = [*node.sources, source]
            node.save(update_fields=["sources"])
    return created


@transaction.atomic
def act_merge(ctx: Ctx, action: Action) -> None:
    """Merge every extraction into one tree: features with the same normalised name under the
    same parent are one node (B.1, "merge features that share common traits")."""
    xc = XcoderCampaign.objects.select_for_update().get(pk=ctx.xc.pk)
    if xc.tree_merged:
        return
    for extraction in FeatureExtraction.objects.filter(xcoder=xc, status=ExtractionStatus.OK):
        for category, tree in feat.extraction_categories(extraction.features).items():
            _store_nodes(
                xc,
                feat.node_specs(category, tree),
                origin=NodeOrigin.EXTRACTED,
                round_no=0,
                source=extraction.problem_id,
            )
    xc.tree_merged = True
    xc.counts_extracted = category_counts(xc)
    xc.save(update_fields=["tree_merged", "counts_extracted", "updated_at"])


def category_tree(xc: XcoderCampaign, category: str) -> dict:
    """The category's subtree as nested display names (``{name: {...}}``)."""
    nodes = list(FeatureNode.objects.filter(xcoder=xc, category=category).order_by("depth"))
    children: dict[int | None, list[FeatureNode]] = {}
    for node in nodes:
        children.setdefault(node.parent_id, []).append(node)
    root = next((n for n in nodes if n.depth == 0), None)

    def build(node: FeatureNode) -> dict:
        return {c.name: build(c) for c in sorted(children.get(node.pk, []), key=lambda n: n.path)}

    return build(root) if root else {}


def act_evolve(ctx: Ctx, action: Action) -> None:
    """One evolution call for one category: new nodes are stored with their origin (breadth or
    depth); the call is recorded so a rerun does not repeat it."""
    xc = ctx.xc
    tree = category_tree(xc, action.category)
    messages, template = prompts.evolution_messages(category=action.category, tree=tree)
    result = ctx.chat(
        xc.generator_endpoint,
        messages,
        role="xcoder_evolve",
        template=template,
        key=f"evolve;round={action.round};category={action.category}",
    )
    with transaction.atomic():
        XcoderCampaign.objects.select_for_update().get(pk=xc.pk)
        if EvolutionStep.objects.filter(
            xcoder=xc, round=action.round, category=action.category
        ).exists():
            return
        try:
            expanded = feat.evolved_category_tree(result.content, action.category)
        except ParseError as exc:
            mark_unparsable(result.call_id, str(exc))
            EvolutionStep.objects.create(
                xcoder=xc,
                round=action.round,
                category=action.category,
                status=ExtractionStatus.FAILED,
                reason=f"unparsable: {exc}"[:500],
            )
            return
        nodes = FeatureNode.objects.filter(xcoder=xc, category=action.category)
        existing = set(nodes.values_list("path", flat=True))
        leaves = set(nodes.filter(children__isnull=True).values_list("path", flat=True))
        diff = feat.evolution_diff(action.category, existing, leaves, expanded)
        added = {}
        for origin, specs in ((NodeOrigin.DEPTH, diff.depth), (NodeOrigin.BREADTH, diff.breadth)):
            added[origin] = _store_nodes(xc, specs, origin=origin, round_no=action.round)
        EvolutionStep.objects.create(
            xcoder=xc,
            round=action.round,
            category=action.category,
            status=ExtractionStatus.OK,
            added_breadth=added[NodeOrigin.BREADTH],
            added_depth=added[NodeOrigin.DEPTH],
        )


def act_close_tree(ctx: Ctx, action: Action) -> None:
    counts = category_counts(ctx.xc)
    # An empty tree still closes (with zero counts): planning then rejects every task visibly.
    XcoderCampaign.objects.filter(pk=ctx.xc.pk).update(counts_evolved=counts or {"(none)": 0})


# --------------------------------------------------------------------------- tasks


def leaves_by_category(xc: XcoderCampaign) -> dict[str, list[tuple[str, ...]]]:
    nodes = list(FeatureNode.objects.filter(xcoder=xc))
    by_id = {n.pk: n for n in nodes}
    has_children = {n.parent_id for n in nodes if n.parent_id}
    result: dict[str, list[tuple[str, ...]]] = {}
    for node in nodes:
        if node.depth == 0 or node.pk in has_children:
            continue
        names = []
        cursor = node
        while cursor is not None and cursor.depth > 0:
            names.append(cursor.name)
            cursor = by_id.get(cursor.parent_id)
        result.setdefault(node.category, []).append(tuple(reversed(names)))
    for items in result.values():
        items.sort()
    return result


def choose_style(mix: dict, rng: random.Random) -> str:
    styles = [s for s in STYLES if mix.get(s, 0) > 0]
    return rng.choices(styles, weights=[mix[s] for s in styles])[0]


def act_plan(ctx: Ctx, action: Action) -> None:
    """Sample a subtree and a style for task ``index`` (deterministic in sample_seed and index)."""
    s = ctx.settings
    rng = random.Random(f"{s.sample_seed}:{action.task_index}")
    style = choose_style(s.style_mix, rng)
    by_category = leaves_by_category(ctx.xc)
    picked = feat.sample_leaves(
        by_category, leaves=s.subtree_leaves, categories=s.subtree_categories, rng=rng
    )
    fields = {"style": style, "status": TaskStatus.PLANNED}
    category_of = {leaf: c for c, items in by_category.items() for leaf in items}
    grouped: dict[str, list[tuple[str, ...]]] = {}
    for leaf in picked:
        grouped.setdefault(category_of[leaf], []).append(leaf)
    fields["sampled_tree"] = {c: feat.nested(leaves) for c, leaves in sorted(grouped.items())}
    if len(picked) < s.min_selected_features:
        fields.update(
            status=TaskStatus.REJECTED,
            reason_code="tree_too_small",
            reason=f"the tree offers {len(picked)} leaf feature(s); "
            f"min_selected_features is {s.min_selected_features}",
        )
    try:
        with transaction.atomic():
            SynthTask.objects.create(xcoder=ctx.xc, index=action.task_index, **fields)
    except IntegrityError:
        pass  # made by an earlier attempt of this step: never a duplicate


def _reject(task: SynthTask, code: str, reason: str, **fields) -> None:
    for key, value in fields.items():
        setattr(task, key, value)
    task.status = TaskStatus.REJECTED
    task.reason_code = code
    task.reason = reason[:4000]
    task.save()


def _sampled_leaf_names(task: SynthTask) -> set[str]:
    names: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if not v:
                    names.add(feat.norm(k))
                walk(v)
        elif isinstance(node, list):
            names.update(feat.norm(x) for x in node if isinstance(x, str))

    walk(task.sampled_tree)
    return names


def act_select(ctx: Ctx, action: Action) -> None:
    """Stage 1: annotate each leaf's potential use, select a compatible subset, state the
    integration strategy. A selection of features that were not sampled, or of too few, is a
    rejection with that reason."""
    task = SynthTask.objects.get(pk=action.task_id)
    messages, template = prompts.select_messages(sampled_tree=task.sampled_tree)
    result = ctx.chat(
        ctx.xc.generator_endpoint,
        messages,
        role="xcoder_select",
        template=template,
        key=f"task={task.index};select",
    )
    task.refresh_from_db()
    if task.status != TaskStatus.PLANNED:
        return
    try:
        selection = prompts.parse_selection(result.content)
    except ParseError as exc:
        mark_unparsable(result.call_id, str(exc))
        _reject(task, "stage1_unparsable", str(exc))
        return
    chosen = feat.selected_features(selection.selected_tree)
    sampled = _sampled_leaf_names(task)
    unknown = [f for f in chosen if feat.norm(f) not in sampled]
    fields = dict(
        roles_tree=selection.roles_tree,
        selected_tree=selection.selected_tree,
        integration_strategy=selection.strategy,
    )
    if unknown:
        _reject(
            task,
            "stage1_unknown_feature",
            "selected features that were not sampled: " + ", ".join(unknown),
            **fields,
        )
        return
    if len(set(map(feat.norm, chosen))) < ctx.settings.min_selected_features:
        _reject(
            task,
            "stage1_too_few_features",
            f"{len(chosen)} feature(s) selected; at least "
            f"{ctx.settings.min_selected_features} are required",
            **fields,
        )
        return
    for key, value in fields.items():
        setattr(task, key, value)
    task.status = TaskStatus.SELECTED
    task.save()


def act_write(ctx: Ctx, action: Action) -> None:
    """Stage 2: the statement in the task's style, then each statement gate and the
    near-duplicate check; the first failure is the rejection reason (all results are kept)."""
    s = ctx.settings
    task = SynthTask.objects.get(pk=action.task_id)
    messages, template = prompts.write_messages(
        style=task.style, selected_tree=task.selected_tree, strategy=task.integration_strategy
    )
    result = ctx.chat(
        ctx.xc.generator_endpoint,
        messages,
        role="xcoder_write",
        template=template,
        key=f"task={task.index};write;style={task.style}",
    )
    task.refresh_from_db()
    if task.status != TaskStatus.SELECTED:
        return
    try:
        written = prompts.parse_task(result.content, style=task.style)
    except ParseError as exc:
        mark_unparsable(result.call_id, str(exc))
        _reject(task, "stage2_unparsable", str(exc))
        return
    task.title = written.title
    task.statement = written.question
    task.entry_point = written.entry_point
    task.starter_code = written.starter_code
    results = gates.run_gates(
        written.question,
        style=task.style,
        features=feat.selected_features(task.selected_tree),
        min_tokens=s.min_statement_tokens,
        min_samples=s.min_samples,
    )
    earlier = {
        f"task {t.index}": t.statement
        for t in SynthTask.objects.filter(xcoder=ctx.xc)
        .exclude(pk=task.pk)
        .exclude(statement="")
        .filter(
            status__in=[
                TaskStatus.WRITTEN,
                TaskStatus.TESTED,
                TaskStatus.SOLVED,
                TaskStatus.ACCEPTED,
                TaskStatus.DISCARDED,
            ]
        )
    }
    for seed in seed_problems(ctx.campaign):
        earlier[f"seed {_seed_key(seed)}"] = seed.statement
    dup = judge.near_duplicate(written.question, earlier, s.near_duplicate_threshold)
    results.append(
        gates.GateResult(
            "near_duplicate",
            not dup.duplicate,
            f"closest: {dup.against or '-'} (similarity {dup.score:.2f}, threshold "
            f"{s.near_duplicate_threshold:g})",
        )
    )
    task.gate_results = [r.to_dict() for r in results]
    failed = next((r for r in results if not r.passed), None)
    if failed:
        _reject(task, failed.gate, failed.detail)
        return
    task.status = TaskStatus.WRITTEN
    task.save()


def act_tests(ctx: Ctx, action: Action) -> None:
    """Test inputs: prompt-based (D.1) and/or a generator program (D.2) run sandboxed with
    ``--seed``. Both sources are recorded per test; duplicates are dropped."""
    s = ctx.settings
    task = SynthTask.objects.get(pk=action.task_id)
    harness = task.harness
    tests: list[dict] = []
    notes: list[str] = []
    generator_code = ""
    errors: list[str] = []
    if s.test_mode in ("prompt", "both"):
        messages, template = prompts.tests_messages(
            statement=task.statement, harness=harness, count=s.prompt_test_count
        )
        result = ctx.chat(
            ctx.xc.generator_endpoint,
            messages,
            role="xcoder_tests",
            template=template,
            key=f"task={task.index};tests",
        )
        try:
            cases = prompts.parse_test_cases(result.content, harness=harness)
            tests += [{**c, "source": "prompt"} for c in cases]
        except ParseError as exc:
            mark_unparsable(result.call_id, str(exc))
            errors.append(f"prompted tests unparsable: {exc}")
    if s.test_mode in ("generator", "both"):
        messages, template = prompts.generator_messages(statement=task.statement, harness=harness)
        result = ctx.chat(
            ctx.xc.generator_endpoint,
            messages,
            role="xcoder_generator",
            template=template,
            key=f"task={task.index};generator",
        )
        try:
            generator_code = materialize.parse_generator(result.content)
        except Exception as exc:  # StageError: the answer holds no program
            mark_unparsable(result.call_id, str(exc))
            errors.append(str(exc))
        if generator_code:
            outcome = sandbox.run_batch(
                generator_code,
                [""],
                harness="stdio",
                limits=ctx.limits(),
                argv=["--seed", str(s.generator_seed)],
            )[0]
            if outcome.status == "SE":
                raise SandboxFailure(outcome.stderr[-300:])
            if outcome.status != "OK":
                errors.append(
                    f"generator {outcome.status} with --seed {s.generator_seed}: "
                    f"{outcome.stderr[-300:]}".strip()
                )
            else:
                try:
                    cases = prompts.parse_test_cases(outcome.stdout, harness=harness)
                    tests += [{**c, "source": "generator", "seed": s.generator_seed} for c in cases]
                except ParseError as exc:
                    errors.append(f"generator output unparsable: {exc}")
    seen: set[str] = set()
    unique = []
    for test in tests:
        if test["input"] in seen:
            notes.append(f"duplicate input dropped ({test['source']}: {test['description']})")
            continue
        seen.add(test["input"])
        unique.append(test)
    task.refresh_from_db()
    if task.status != TaskStatus.WRITTEN:
        return
    task.tests = unique
    task.generator_code = generator_code
    task.generator_seed = s.generator_seed if generator_code else None
    task.test_notes = notes + errors
    if not unique:
        _reject(task, "no_tests", "; ".join(errors) or "no test input was produced")
        return
    task.status = TaskStatus.TESTED
    task.save()


def solution_gate(content: str, *, tokens_out: int, max_tokens: int) -> tuple[str, str]:
    """C.1 static gates: (code, "") or ("", reason). Exactly one fenced code block, which
    parses as Python, in an answer within the token cap."""
    if tokens_out > max_tokens:
        return "", f"answer of {tokens_out} tokens exceeds the cap of {max_tokens}"
    try:
        blocks = fenced_blocks(content or "")
    except ParseError as exc:
        return "", str(exc)
    if len(blocks) != 1:
        return "", f"{len(blocks)} code blocks: exactly one is required"
    code, problem = difficulty.solver_code(content)
    if not code:
        return "", problem
    try:
        ast.parse(code)
    except SyntaxError as exc:
        return "", f"the code does not parse: {exc.msg} (line {exc.lineno})"
    return code, ""


def act_solve(ctx: Ctx, action: Action) -> None:
    """Candidate solutions: ``candidates_per_endpoint`` answers from every solver endpoint, each
    stored as it arrives with its static-gate verdict (a rerun asks only for missing ones)."""
    s = ctx.settings
    task = SynthTask.objects.get(pk=action.task_id)
    have = set(CandidateSolution.objects.filter(task=task).values_list("endpoint_id", "sample"))
    messages, template = difficulty.solver_messages(
        statement=task.statement, harness=task.harness, entry_point=task.entry_point
    )
    for endpoint in ctx.xc.solver_endpoints.order_by("name"):
        for sample in range(s.candidates_per_endpoint):
            if (endpoint.pk, sample) in have:
                continue
            result = ctx.chat(
                endpoint,
                messages,
                role="xcoder_solver",
                template=template,
                key=f"task={task.index};solve;endpoint={endpoint.name};sample={sample}",
                temperature=s.solver_temperature,
            )
            tokens = result.tokens_out or gates.count_tokens(result.content)
            code, reason = solution_gate(
                result.content, tokens_out=tokens, max_tokens=s.max_solution_tokens
            )
            if reason:
                mark_unparsable(result.call_id, reason)
            try:
                with transaction.atomic():
                    CandidateSolution.objects.create(
                        task=task,
                        endpoint=endpoint,
                        sample=sample,
                        content=result.content,
                        code=code,
                        tokens_out=tokens,
                        passed_gates=not reason,
                        reason=reason[:500],
                        call_id=result.call_id,
                    )
            except IntegrityError:
                pass
    passing = CandidateSolution.objects.filter(task=task, passed_gates=True).count()
    task.refresh_from_db()
    if task.status != TaskStatus.TESTED:
        return
    if passing < s.min_candidates:
        _reject_discard(
            task,
            "too_few_candidates",
            f"{passing} candidate(s) passed the static gates; min_candidates is {s.min_candidates}",
        )
        return
    task.status = TaskStatus.SOLVED
    task.save(update_fields=["status", "updated_at"])


def _reject_discard(task: SynthTask, code: str, reason: str) -> None:
    task.status = TaskStatus.DISCARDED
    task.reason_code = code
    task.reason = reason[:4000]
    task.save()


def output_key(harness: str):
    """What counts as the same output in the vote: the function harness compares JSON values;
    stdio compares text with trailing spaces and blank lines ignored (the judge's exact mode)."""
    if harness == "function":

        def key(text: str) -> str:
            try:
                return json.dumps(json.loads(text), sort_keys=True)
            except ValueError:
                return text

        return key

    def key(text: str) -> str:
        return "\n".join(line.rstrip() for line in text.rstrip().splitlines())

    return key


def test_weights(tests: list[dict], weighting: str) -> list[int]:
    if weighting == "size":
        return voting.size_weights([len(t["input"]) for t in tests])
    return [voting.semantic_weight(t.get("category", "")) for t in tests]


def act_verify(ctx: Ctx, action: Action) -> None:
    """Dual verification: run every gated candidate on every input in the sandbox, vote, weigh,
    split, select and confirm. A confirmed task becomes a Problem; otherwise it is discarded
    with the reason. The whole vote matrix is stored either way."""
    s = ctx.settings
    task = SynthTask.objects.get(pk=action.task_id)
    candidates = list(
        CandidateSolution.objects.filter(task=task, passed_gates=True)
        .select_related("endpoint")
        .order_by("endpoint__name", "sample")
    )
    inputs = [t["input"] for t in task.tests]
    columns: list[list[str | None]] = []
    statuses: list[list[str]] = []
    for cand in candidates:
        outcomes = sandbox.run_batch(
            cand.code,
            inputs,
            harness=task.harness,
            limits=ctx.limits(),
            entry_point=task.entry_point,
        )
        if any(o.status == "SE" for o in outcomes):
            raise SandboxFailure(next(o.stderr for o in outcomes if o.status == "SE")[-300:])
        columns.append([o.stdout if o.status == "OK" else None for o in outcomes])
        statuses.append([o.status for o in outcomes])
    outputs = [[col[i] for col in columns] for i in range(len(inputs))]
    weights = test_weights(task.tests, s.weighting)
    verification = voting.verify(
        outputs,
        weights=weights,
        key=output_key(task.harness),
        holdout_fraction=s.holdout_fraction,
        seed=f"{s.split_seed}:{task.index}",
    )
    record = verification.to_dict()
    record["candidates"] = [
        {"id": c.pk, "endpoint": c.endpoint.name, "sample": c.sample} for c in candidates
    ]
    record["statuses"] = [
        [statuses[j][i] for j in range(len(candidates))] for i in range(len(inputs))
    ]
    record["weighting"] = s.weighting
    record["golden_pass_rate"] = verification.golden_pass_rate
    with transaction.atomic():
        task = SynthTask.objects.select_for_update().get(pk=task.pk)
        if task.status != TaskStatus.SOLVED:
            return
        task.verification = record
        if verification.golden is None:
            _reject_discard(task, verification.reason_code, verification.reason)
            return
        golden = candidates[verification.golden]
        task.problem = _accepted_problem(ctx, task, golden, verification)
        task.status = TaskStatus.ACCEPTED
        task.reason_code = ""
        task.reason = ""
        task.save()


def _parent_seed(ctx: Ctx, task: SynthTask) -> Problem:
    """The seed whose extracted features the task uses most (ties: the earliest seed): the
    synthesized problem's lineage parent, so review groups and lineage pages can place it."""
    names = {feat.norm(n) for n in feat.selected_features(task.selected_tree)}
    votes: Counter[int] = Counter()
    for node in FeatureNode.objects.filter(xcoder=ctx.xc, depth__gt=0).only("name", "sources"):
        if feat.norm(node.name) in names:
            votes.update(node.sources)
    seeds = seed_problems(ctx.campaign)
    if votes:
        best = max(votes.values())
        for seed in seeds:
            if votes.get(seed.pk) == best:
                return seed
    return seeds[0]


def _accepted_problem(ctx: Ctx, task: SynthTask, golden: CandidateSolution, ver) -> Problem:
    """The Problem row with the voted tests the golden solution reproduces (a benchmark's
    reference must pass its own tests; the share it passes is kept in metadata)."""
    origin_id = f"c{ctx.campaign.pk}-t{task.index}"
    existing = Problem.objects.filter(origin_dataset=METHOD, origin_id=origin_id).first()
    if existing is not None:
        return existing
    parent = _parent_seed(ctx, task)
    root = parent.lineage_root or parent
    problem = Problem.objects.create(
        title=task.title or f"X-Coder task {task.index}",
        statement=task.statement,
        reference_solution=golden.code,
        harness=task.harness,
        entry_point=task.entry_point,
        starter_code=task.starter_code,
        time_limit_s=ctx.settings.execution_timeout,
        memory_mb=ctx.settings.memory_mb,
        kind=ProblemKind.SYNTHESIZED,
        method=METHOD,
        origin_dataset=METHOD,
        origin_id=origin_id,
        metadata={
            "campaign": ctx.campaign.pk,
            "task": task.pk,
            "style": task.style,
            "features": feat.selected_features(task.selected_tree),
            "golden_candidate": golden.pk,
            "golden_endpoint": golden.endpoint.name,
            "golden_pass_rate": ver.golden_pass_rate,
            "candidates": len(ver.weighted_scores),
        },
        parent=parent,
        lineage_root=root,
        lineage_depth=parent.lineage_depth + 1,
    )
    counters: dict[str, int] = {}
    rows = []
    for i, test in enumerate(task.tests):
        if ver.labels[i] is None or not ver.agree[i][ver.golden]:
            continue
        tier = TIERS_BY_WEIGHT.get(ver.weights[i], "small")
        ordinal = counters.get(tier, 0)
        counters[tier] = ordinal + 1
        row = TestCase(
            problem=problem,
            tier=tier,
            ordinal=ordinal,
            hidden=True,
            provenance={
                "source": test.get("source"),
                "category": test.get("category"),
                "seed": test.get("seed"),
                "weight": ver.weights[i],
                "split": ver.split[i],
                "votes": ver.votes[i],
                "labelled_by": "majority vote",
            },
        )
        row.input = test["input"]
        row.output = ver.labels[i]
        rows.append(row)
    TestCase.objects.bulk_create(rows)
    if ctx.xc.problem_set_id:
        ctx.xc.problem_set.problems.add(problem)
    return problem


ACTIONS = {
    "extract": act_extract,
    "merge": act_merge,
    "evolve": act_evolve,
    "close_tree": act_close_tree,
    "plan": act_plan,
    "select": act_select,
    "write": act_write,
    "tests": act_tests,
    "solve": act_solve,
    "verify": act_verify,
}
