"""The no-filter ablation (seed document 002, "Filter ablation": the same mutations, the filters
skipped; the paper reports 10.62 against 8.57 Avg@5 on FrontierCS for Qwen3.5-9B trained on
each set).

The ablation arm starts from the filtered run's mutated candidates (its closed rounds) and skips
the coarse filter, the top-N_div selection by model-judged divergence and the top-N_final
selection by execution divergence: every candidate that gets a validated scoring environment is
kept. The document gives no size for the no-filter set, only that the filters are skipped, so
nothing is sub-sampled to the filtered set's size; the page shows both counts.

The arm is a FrontierSmith campaign of its own (never launched: it has no round left to run)
holding a copy of every candidate. What the filtered run already computed for a candidate is
the same calls under the same replay keys, so it is reused, not asked again: the sampled
solutions, pair verdicts and, for a candidate that reached the build stage, its environment,
score vectors and divergences. A candidate the filters removed before the build stage (the
coarse filter, N_div) goes through the kind's own ``sample``, ``pair``, ``judged`` and
``build`` stages in the arm; those model calls go through the arm campaign's ledger and budget
like any campaign's. The pairwise judge is asked there as a measure, never as a filter.

A kept candidate whose execution divergence could not be measured (fewer than two scored
solutions) is kept (nothing is ranked) but labelled so, and left out of the arm's mean
divergence, which says how many it leaves out.
"""

from __future__ import annotations

import time
from statistics import mean

from django.core.exceptions import ValidationError
from django.db import transaction

from evolution.llm.errors import BudgetExhausted
from evolution.models import LLMCall, ModelEndpoint
from evolution.models.campaigns import Campaign, CampaignState
from evolution.streams.kinds import unit_transition

from .config import FrontierSettings
from .engine import divergence
from .kind import KIND
from .models import (
    CandidateDecision,
    CandidateStage,
    FrontierCampaign,
    FrontierCandidate,
    FrontierRound,
    NoFilterAblation,
)
from .selectors import round_funnel
from .stages.common import KIND_NAME, Action, decide_candidate, load_context

# The paper's result (seed document 002), shown beside the arms: a training result on FrontierCS
# that cannot be reproduced here (no RL training), not comparable with the measures below.
PAPER = {
    "benchmark": "FrontierCS Avg@5, Qwen3.5-9B trained with GRPO",
    "filtered": 10.62,
    "no_filter": 8.57,
}
# What the page and the command show for each arm, in order: (summary key, label).
MEASURES = (
    ("proposed", "proposed"),
    ("parsed", "parsed"),
    ("entered_build", "entered the build stage"),
    ("converged", "environment converged"),
    ("build_yield", "build yield"),
    ("kept", "kept"),
    ("kept_filter_rejected", "kept though the coarse filter rejected them"),
    ("judged_divergence", "mean judged divergence of the kept"),
    ("execution_divergence", "mean execution divergence of the kept"),
    ("unmeasured_divergence", "kept with execution divergence not measured"),
    ("mean_score", "solver's mean score V of the kept (Avg@n)"),
    ("score_spread", "mean score spread of the kept"),
)

# Attempts of one stage on one candidate before the arm gives the candidate up.
STAGE_TRIES = 3
KEPT = "kept"
KEPT_UNMEASURED = "kept, execution divergence not measured"
_COPIED = (
    "round",
    "index",
    "parent_id",
    "operator",
    "parent_formulation",
    "formulation",
    "title",
    "statement",
    "objective",
    "direction",
    "filter_verdict",
    "filter_passed",
)
_BUILT = (
    "solutions",
    "pair_verdicts",
    "judged_divergence",
    "build_attempts",
    "build_ledger",
    "build_parts",
    "generator",
    "verifier",
    "baseline",
    "weak",
    "tests",
    "score_matrix",
    "execution_divergence",
    "score_spread",
)


def converged(c: FrontierCandidate) -> bool:
    """The scoring environment validated: its tests are stored once the programs agree."""
    return bool(c.tests)


def mean_score(c: FrontierCandidate) -> float | None:
    """The sampled solutions' mean score V over the candidate's tests: the solver's Avg@n on
    this problem (None before the environment converged or with no scored solution)."""
    values = [v for row in c.score_matrix or [] for v in row]
    return mean(values) if values else None


def _built(c: FrontierCandidate) -> bool:
    return c.build_attempts > 0 or converged(c)


def _copy(arm: FrontierCampaign, c: FrontierCandidate) -> tuple[FrontierCandidate, bool]:
    """The arm's copy of ``c`` and whether it reuses stored answers. A candidate the filtered
    run built keeps its environment and outcome; one the filters removed before the build stage
    is put at ``filtered`` (the coarse filter skipped) with the solutions and verdicts it has."""
    fields = {name: getattr(c, name) for name in _COPIED}
    if not c.statement:  # the mutation itself failed: nothing to run, in either arm
        row = FrontierCandidate.objects.create(
            frontier=arm,
            stage=CandidateStage.DONE,
            decision=c.decision,
            decision_reason=c.decision_reason,
            **fields,
        )
        return row, False
    if _built(c):
        fields.update({name: getattr(c, name) for name in _BUILT})
        if converged(c):
            fields.update(stage=CandidateStage.EXECUTED)
        else:
            fields.update(
                stage=CandidateStage.DONE, decision=c.decision, decision_reason=c.decision_reason
            )
        return FrontierCandidate.objects.create(frontier=arm, **fields), True
    fields.update(
        stage=CandidateStage.FILTERED, solutions=c.solutions, pair_verdicts=c.pair_verdicts
    )
    reused = bool(c.solutions or c.pair_verdicts)
    return FrontierCandidate.objects.create(frontier=arm, **fields), reused


@transaction.atomic
def _arm_create(fc: FrontierCampaign, numbers: list[int], mutator, solver) -> FrontierCampaign:
    from .services import frontier_campaign_create

    campaign = fc.campaign
    settings = {**campaign.settings, "rounds": max(numbers), "bundled_calibration": False}
    made = frontier_campaign_create(
        name=f"{campaign.name} · no-filter ablation {fc.ablations.count() + 1}",
        seed_set=campaign.seed_set or fc.seed_pool,
        mutator_endpoint=mutator,
        solver_endpoint=solver,
        settings=settings,
    )
    Campaign.objects.filter(pk=made.pk).update(
        state_reason=f"no-filter ablation arm of campaign {campaign.pk}: never launched"
    )
    arm = FrontierCampaign.objects.get(pk=made.pk)
    arm.current_round = max(numbers) + 1
    arm.save(update_fields=["current_round"])
    for rnd in fc.rounds.filter(number__in=numbers):
        FrontierRound.objects.create(
            frontier=arm, number=rnd.number, pool=rnd.pool, div_selected=True, closed=True
        )
    return arm


def _next(arm: FrontierCampaign, settings: FrontierSettings):
    """The arm's next (stage, candidate): the kind's own stages minus the filters."""
    pairs_needed = len(divergence.pairs(settings.solutions_per_candidate))
    waiting = arm.candidates.filter(
        decision="",
        stage__in=(CandidateStage.FILTERED, CandidateStage.JUDGED, CandidateStage.BUILDING),
    ).order_by("round", "index")
    for c in waiting:
        if c.stage == CandidateStage.FILTERED:
            if len(c.solutions) < settings.solutions_per_candidate:
                return "sample", c
            if len(c.pair_verdicts) < pairs_needed:
                return "pair", c
            return "judged", c
        if c.stage == CandidateStage.JUDGED:
            return "to_build", c  # N_div skipped: straight to the build stage
        return "build", c
    return None, None


def _run_arm(arm: FrontierCampaign, max_steps: int) -> str:
    """Advance the arm's candidates until each is converged or decided; the reason it stopped
    early, or ""."""
    failures: dict[tuple[str, int], int] = {}
    for _ in range(max_steps):
        ctx = load_context(arm.pk)
        name, c = _next(ctx.fc, ctx.settings)
        if c is None:
            return ""
        if name == "to_build":
            unit_transition(
                KIND_NAME,
                FrontierCandidate.objects.filter(pk=c.pk, decision=""),
                source=CandidateStage.JUDGED,
                target=CandidateStage.BUILDING,
            )
            continue
        try:
            KIND.stage(name).run(ctx, Action(name, candidate_id=c.pk))
        except BudgetExhausted as exc:
            return f"budget reached: {exc}"
        except Exception as exc:  # a failed call or run: tried again, then given up
            key = (name, c.pk)
            failures[key] = failures.get(key, 0) + 1
            if failures[key] >= STAGE_TRIES:
                decide_candidate(
                    c.pk,
                    CandidateDecision.UNPARSABLE,
                    f"ablation arm gave up at {name} after {STAGE_TRIES} tries: "
                    f"{exc.__class__.__name__}: {exc}",
                )
    return f"stopped after {max_steps} steps"


def _mean(values: list) -> float | None:
    known = [v for v in values if v is not None]
    return round(mean(known), 4) if known else None


def _arm_summary(rows: list[FrontierCandidate], kept: list[FrontierCandidate]) -> dict:
    entered = [c for c in rows if _built(c)]
    built = [c for c in entered if converged(c)]
    unmeasured = [c for c in kept if c.execution_divergence is None]
    return {
        "proposed": len(rows),
        "parsed": sum(1 for c in rows if c.statement),
        "entered_build": len(entered),
        "converged": len(built),
        "build_yield": round(len(built) / len(entered), 4) if entered else None,
        "kept": len(kept),
        "kept_filter_rejected": sum(1 for c in kept if c.filter_passed is False),
        "judged_divergence": _mean([c.judged_divergence for c in kept]),
        "execution_divergence": _mean([c.execution_divergence for c in kept]),
        "unmeasured_divergence": len(unmeasured),
        "mean_score": _mean([mean_score(c) for c in kept]),
        "score_spread": _mean([c.score_spread for c in kept]),
    }


def _answers(twin: FrontierCandidate) -> str:
    """Where the arm's answers for a candidate came from."""
    if not twin.statement:
        return "none (the mutation failed)"
    if _built(twin):
        return "reused from the filtered run"
    if twin.solutions:
        return "solutions reused, the rest asked by the arm"
    return "asked by the arm"


def _outcome(c: FrontierCandidate) -> str:
    if converged(c) and not c.decision:
        return KEPT if c.execution_divergence is not None else KEPT_UNMEASURED
    return c.decision or c.stage


def no_filter_ablation(
    *,
    campaign_id: int,
    mutator_endpoint: ModelEndpoint | None = None,
    solver_endpoint: ModelEndpoint | None = None,
    max_steps: int = 2000,
) -> NoFilterAblation:
    """Run the no-filter arm over campaign ``campaign_id``'s closed rounds and store both arms.
    The arm's new calls go to the given endpoints (by default the campaign's own).
    ValidationError keyed "campaign" when the campaign has no closed round."""
    started = time.monotonic()
    fc = FrontierCampaign.objects.select_related("campaign", "campaign__seed_set").get(
        pk=campaign_id
    )
    if hasattr(fc, "ablation_of"):
        raise ValidationError({"campaign": ["this campaign is itself a no-filter ablation arm"]})
    numbers = sorted(fc.rounds.filter(closed=True).values_list("number", flat=True))
    if not numbers:
        raise ValidationError({"campaign": ["the campaign has no closed round yet"]})
    source = list(fc.candidates.filter(round__in=numbers).order_by("round", "index"))
    arm = _arm_create(
        fc, numbers, mutator_endpoint or fc.mutator_endpoint, solver_endpoint or fc.solver_endpoint
    )
    reused = 0
    with transaction.atomic():
        for c in source:
            reused += _copy(arm, c)[1]
    stopped = _run_arm(arm, max_steps)

    rows = list(arm.candidates.order_by("round", "index"))
    for rnd in arm.rounds.all():
        rnd.funnel = round_funnel(fc=arm, number=rnd.number)
        rnd.save(update_fields=["funnel"])
    calls = LLMCall.objects.filter(campaign_id=arm.pk)
    replayed = fc.campaign.replayed or calls.filter(replayed=True).exists()
    Campaign.objects.filter(pk=arm.pk).update(
        state=CampaignState.COMPLETED if not stopped else CampaignState.FAILED,
        replayed=replayed,
        state_reason=(
            f"no-filter ablation arm of campaign {fc.pk}, run by frontiersmith_ablation"
            + (f"; {stopped}" if stopped else "")
        ),
    )
    by_key = {(c.round, c.index): c for c in source}
    kept = [c for c in rows if converged(c) and not c.decision]
    table = []
    for c in rows:
        twin = by_key[(c.round, c.index)]
        table.append(
            {
                "round": c.round,
                "index": c.index,
                "arm_candidate": c.pk,
                "candidate": twin.pk,
                "title": c.title,
                "operator": c.operator,
                "filter_passed": twin.filter_passed,
                "filtered": twin.decision or twin.stage,
                "no_filter": _outcome(c),
                "answers": _answers(twin),
                "judged_divergence": c.judged_divergence,
                "execution_divergence": c.execution_divergence,
                "mean_score": _mean([mean_score(c)]),
                "reason": c.decision_reason if c.decision else "",
            }
        )
    summary = {
        "filtered": _arm_summary(
            source, [c for c in source if c.decision == CandidateDecision.ACCEPTED]
        ),
        "no_filter": _arm_summary(rows, kept),
        "rounds": numbers,
        "paper": PAPER,
        "endpoints": {"mutator": arm.mutator_endpoint.name, "solver": arm.solver_endpoint.name},
    }
    return NoFilterAblation.objects.create(
        frontier=fc,
        arm=arm,
        replayed=replayed,
        summary=summary,
        candidates=table,
        calls=calls.count(),
        reused=reused,
        stopped=stopped,
        elapsed_s=round(time.monotonic() - started, 3),
    )
