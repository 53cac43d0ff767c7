"""Stage ``verify``: dual verification (vote, weights, hold-out; pure logic in
``engine/voting.py``), then the accepted problem or a discarded task with its reason."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass

from django.db import transaction

from evolution import sandbox
from evolution.models import Problem, TestCase
from evolution.models.problems import ProblemKind
from evolution.streams.errors import SandboxFailure

from ..engine import features as feat
from ..engine import gates, voting
from ..models import CandidateSolution, FeatureNode, SynthTask, TaskStatus
from .common import (
    METHOD,
    TIERS_BY_WEIGHT,
    Action,
    Ctx,
    discard_task,
    move_task,
    seed_problems,
)
from .testfiles import input_of, keep, size_of, text_of

MB = 1_000_000


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
        return voting.size_weights([size_of(t) for t in tests])
    return [voting.semantic_weight(t.get("category", "")) for t in tests]


def candidate_limits(ctx: Ctx) -> sandbox.Limits:
    """A candidate's run on one test: the campaign's time and memory, and room for the output
    of the largest test (``max_test_mb``), not the judge's 1 MB default."""
    s = ctx.settings
    return sandbox.Limits(
        time_s=s.execution_timeout, memory_mb=s.memory_mb, max_output_bytes=s.max_test_mb * MB
    )


def chunks(tests: list[dict], budget: int) -> list[range]:
    """Consecutive tests whose inputs total at most ``budget`` bytes (at least one each)."""
    out: list[range] = []
    start, total = 0, 0
    for i, test in enumerate(tests):
        size = size_of(test)
        if i > start and total + size > budget:
            out.append(range(start, i))
            start, total = i, 0
        total += size
    if start < len(tests):
        out.append(range(start, len(tests)))
    return out


@dataclass
class Runs:
    """What the vote needs of every run, and no more: per test and candidate the digest of the
    output's comparison key (None: no output) and the status; per test the voted label's text
    (inline, or a file entry for a large one)."""

    digests: list[list[str | None]]
    statuses: list[list[str]]
    labels: list


def run_candidates(ctx: Ctx, task: SynthTask, candidates: list[CandidateSolution]) -> Runs:
    """Every candidate on every input, a chunk of inputs at a time (``chunks``: at most four
    of the largest tests' worth of input in memory, with the candidates' outputs on them).
    Outputs are reduced to digests as they arrive; the majority output of each input is kept
    (in a file when large) before the next chunk runs."""
    key = output_key(task.harness)
    n, m = len(task.tests), len(candidates)
    runs = Runs(
        digests=[[None] * m for _ in range(n)],
        statuses=[[""] * m for _ in range(n)],
        labels=[None] * n,
    )
    limits = candidate_limits(ctx)
    for block in chunks(task.tests, 4 * ctx.settings.max_test_mb * MB):
        inputs = [input_of(task.tests[i]) for i in block]
        texts: list[dict[str, str]] = [{} for _ in block]
        for j, cand in enumerate(candidates):
            outcomes = sandbox.run_batch(
                cand.code, inputs, harness=task.harness, limits=limits, entry_point=task.entry_point
            )
            if any(o.status == "SE" for o in outcomes):
                raise SandboxFailure(next(o.stderr for o in outcomes if o.status == "SE")[-300:])
            for k, (i, outcome) in enumerate(zip(block, outcomes, strict=True)):
                runs.statuses[i][j] = outcome.status
                if outcome.status == "OK":
                    digest = hashlib.sha256(key(outcome.stdout).encode("utf-8")).hexdigest()
                    runs.digests[i][j] = digest
                    texts[k].setdefault(digest, outcome.stdout)
            del outcomes
        del inputs
        for k, i in enumerate(block):
            winner, _ = voting.majority(runs.digests[i], lambda d: d)
            if winner is not None:
                runs.labels[i] = keep_label(ctx, task, i, texts[k][winner])
    return runs


def keep_label(ctx: Ctx, task: SynthTask, i: int, text: str):
    stored = keep(ctx.campaign.pk, task.index, f"{i:03d}-label.out", text)
    return stored.get("input", stored)


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
    runs = run_candidates(ctx, task, candidates)
    weights = test_weights(task.tests, s.weighting)
    # The vote over digests of the comparison key is the vote over outputs (same key, same
    # digest); the label of each input is its majority output, kept by run_candidates.
    verification = voting.verify(
        runs.digests,
        weights=weights,
        key=lambda d: d,
        holdout_fraction=s.holdout_fraction,
        seed=f"{s.split_seed}:{task.index}",
    )
    verification.labels = [
        runs.labels[i] if verification.labels[i] is not None else None
        for i in range(len(task.tests))
    ]
    record = verification.to_dict()
    record["candidates"] = [
        {"id": c.pk, "endpoint": c.endpoint.name, "sample": c.sample} for c in candidates
    ]
    record["statuses"] = runs.statuses
    record["weighting"] = s.weighting
    record["golden_pass_rate"] = verification.golden_pass_rate
    with transaction.atomic():
        task = SynthTask.objects.select_for_update().get(pk=task.pk)
        if task.status != TaskStatus.SOLVED:
            return
        task.verification = record
        if verification.golden is None:
            discard_task(task, verification.reason_code, verification.reason)
            return
        golden = candidates[verification.golden]
        task.problem = _accepted_problem(ctx, task, golden, verification)
        move_task(task, TaskStatus.ACCEPTED, reason_code="", reason="")


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


def _golden_reasoning(golden: CandidateSolution) -> dict:
    reasoning = gates.reasoning_of(golden.content)
    if not reasoning:
        return {}
    return {"golden_reasoning": reasoning, "golden_call": golden.call_id}


def _accepted_problem(ctx: Ctx, task: SynthTask, golden: CandidateSolution, ver) -> Problem:
    """The Problem row with the tests of T_golden (the weighted suite, not the hold-out) that
    the golden solution reproduces (a benchmark's reference must pass its own tests; the share
    of all voted tests it passes is kept in metadata)."""
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
        reference_provenance={
            "source": "xcoder",
            "campaign": ctx.campaign.pk,
            "golden_candidate": golden.pk,
            "endpoint": golden.endpoint.name,
        },
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
            "holdout_tests": ver.split.count("val"),
            # The golden candidate's reasoning (its <think> block, C.1 (i)): the long chain
            # of thought of the SFT pair [q, A_golden] (the release's ``sft`` export).
            **_golden_reasoning(golden),
        },
        parent=parent,
        lineage_root=root,
        lineage_depth=parent.lineage_depth + 1,
    )
    counters: dict[str, int] = {}
    rows = []
    for i, test in enumerate(task.tests):
        # T_golden only: the hold-out half confirmed the choice and is not part of the
        # returned test set (Algorithm 1 returns A_golden and T_golden).
        if ver.split[i] != "golden" or not ver.agree[i][ver.golden]:
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
        row.input = input_of(test)
        row.output = text_of(ver.labels[i])
        rows.append(row)
    TestCase.objects.bulk_create(rows)
    if ctx.xc.problem_set_id:
        ctx.xc.problem_set.problems.add(problem)
    return problem
