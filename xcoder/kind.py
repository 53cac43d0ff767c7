"""X-Coder's declared graph (paper 001): grow a feature tree, then synthesize tasks from it.

One stream per campaign (``XcoderCampaign``): the tree is extracted, merged and evolved before
tasks are sampled from it. Units are synthesis tasks: planned, selected (stage 1), written
(stage 2), tested, solved, then accepted or discarded by dual verification; a statement gate may
reject a task on the way; a task a step keeps failing on is given up as ``error``. An extraction
or evolution step that keeps failing is recorded as failed and the tree grows without it.
"""

from __future__ import annotations

from django.db.models import Count, Q

from evolution.measurement import stage as measurement
from evolution.models import Campaign
from evolution.streams.kinds import (
    GIVE_UP_REASON,
    NEW,
    Kind,
    recorded_problems,
    register,
    stages_of,
    unit_transition,
)

from .models import (
    TERMINAL_TASK_STATES,
    EvolutionStep,
    ExtractionStatus,
    FeatureExtraction,
    SynthTask,
    TaskStatus,
    XcoderCampaign,
)
from .stages import (
    close_tree,
    difficulty,
    evolve,
    evolve_seed,
    extract,
    merge,
    plan,
    select,
    solve,
    tests,
    verify,
    write,
)
from .stages.common import METHOD, Action, Ctx, load_context, seed_problems, tree_categories

T = TaskStatus
OPEN = (T.PLANNED, T.SELECTED, T.WRITTEN, T.TESTED, T.SOLVED)


# The campaign's accepted problems (what the shared measurement stage measures).
kept_problems = measurement.kept_problems_of(METHOD)


def action_for(ctx: Ctx) -> Action:
    """The next thing to do, from the rows alone (so a rerun after a crash picks up here)."""
    xc, s = ctx.xc, ctx.settings
    done = set(FeatureExtraction.objects.filter(xcoder=xc).values_list("problem_id", flat=True))
    for seed in seed_problems(ctx.campaign):
        if seed.pk not in done:
            return Action("extract", problem_id=seed.pk)
    if s.evolution_scope == "seed" and not xc.tree_merged:
        # Evolve-then-merge: every seed's features evolved on their own, then one merge.
        step = evolve_seed_action(ctx)
        if step is not None:
            return step
    if not xc.tree_merged:
        return Action("merge")
    if s.evolution_scope == "tree":
        evolved = set(
            EvolutionStep.objects.filter(xcoder=xc, problem__isnull=True).values_list(
                "round", "category"
            )
        )
        categories = tree_categories(xc)
        for round_no in range(1, s.evolution_rounds + 1):
            for category in categories:
                if (round_no, category) not in evolved:
                    return Action("evolve", round=round_no, category=category)
    if not xc.counts_evolved:
        return Action("close_tree")
    tasks = {t.index: t for t in SynthTask.objects.filter(xcoder=xc).only("id", "index", "status")}
    # Tasks advance in groups (``Ctx.task_group``): a group's tasks take each stage together,
    # the one furthest behind first, so one step asks the stage's calls for all of them.
    index = 0
    while index < s.num_tasks:
        group = ctx.task_group(index)
        for i in group:
            if i not in tasks:
                return Action("plan", task_index=i)
        waiting = [tasks[i] for i in group if tasks[i].status in TASK_STEPS]
        if waiting:
            task = min(waiting, key=lambda t: (OPEN.index(t.status), t.index))
            return Action(TASK_STEPS[task.status], task_index=task.index, task_id=task.pk)
        index = group.stop
    if s.difficulty_estimate:
        # B.3 done differently: every accepted task rated by the judge model (one step asks
        # for all of them), before the panel measures them.
        first = difficulty.unrated(ctx).only("id", "index").first()
        if first is not None:
            return Action("difficulty", task_index=first.index, task_id=first.pk)
    return Action("finished")


def evolve_seed_action(ctx: Ctx) -> Action | None:
    """The next (round, seed) whose extracted features are not evolved yet, or None."""
    xc = ctx.xc
    seeds = list(
        FeatureExtraction.objects.filter(xcoder=xc, status=ExtractionStatus.OK)
        .order_by("problem_id")
        .values_list("problem_id", flat=True)
    )
    done = set(
        EvolutionStep.objects.filter(xcoder=xc, problem__isnull=False).values_list(
            "round", "problem_id"
        )
    )
    for round_no in range(1, ctx.settings.evolution_rounds + 1):
        for problem_id in seeds:
            if (round_no, problem_id) not in done:
                return Action("evolve_seed", round=round_no, problem_id=problem_id)
    return None


TASK_STEPS = {
    TaskStatus.PLANNED: "select",
    TaskStatus.SELECTED: "write",
    TaskStatus.WRITTEN: "tests",
    TaskStatus.TESTED: "solve",
    TaskStatus.SOLVED: "verify",
}


def work_finished(ctx: Ctx) -> bool:
    return action_for(ctx).name == "finished"


def next_action(ctx: Ctx):
    # Then the shared stage: the panel measures every accepted problem (measure_kept).
    return measurement.after(action_for(ctx), ctx, kept_problems)


def give_up(ctx: Ctx, action: Action, reason: str) -> bool:
    reason = reason[:500]
    if action.name == "difficulty":
        # The estimate fails; the accepted task stays accepted.
        difficulty.store(
            SynthTask.objects.get(pk=action.task_id),
            {"status": "failed", "method": difficulty.METHOD, "reason": reason},
        )
        return True
    if action.task_id:
        unit_transition(
            KIND,
            SynthTask.objects.filter(pk=action.task_id).exclude(status__in=TERMINAL_TASK_STATES),
            source=OPEN,
            target=T.ERROR,
            reason_code="error",
            reason=reason,
        )
        return True
    if action.name == "extract":
        FeatureExtraction.objects.get_or_create(
            xcoder_id=ctx.xc.pk,
            problem_id=action.problem_id,
            defaults={"status": ExtractionStatus.FAILED, "reason": reason},
        )
        return True
    if action.name == "evolve_seed":
        EvolutionStep.objects.get_or_create(
            xcoder_id=ctx.xc.pk,
            round=action.round,
            problem_id=action.problem_id,
            defaults={"category": "", "status": ExtractionStatus.FAILED, "reason": reason},
        )
        return True
    if action.name == "evolve":
        EvolutionStep.objects.get_or_create(
            xcoder_id=ctx.xc.pk,
            round=action.round,
            category=action.category,
            defaults={"status": ExtractionStatus.FAILED, "reason": reason},
        )
        return True
    return False  # merging, closing the tree, planning: no item to give up on


def seed_counts(campaign_ids: list[int]) -> dict[int, int]:
    """Each campaign's seeds as ``seed_problems`` takes them: its seed set's problems with a
    reference solution, the first ``seed_limit`` of them (one query)."""
    rows = (
        Campaign.objects.filter(pk__in=campaign_ids)
        .annotate(
            n=Count("seed_set__problems", filter=~Q(seed_set__problems__reference_solution=""))
        )
        .values_list("pk", "n", "seed_limit")
    )
    return {pk: min(n, limit) if limit else n for pk, n, limit in rows}


KIND = register(
    Kind(
        name="xcoder",
        label="X-Coder",
        stream_model=XcoderCampaign,
        unit_model=SynthTask,
        unit_state_field="status",
        states=tuple(T.values),
        edges=(
            (NEW, T.PLANNED),
            (NEW, T.REJECTED),  # the sampled tree is too small
            (T.PLANNED, T.SELECTED),
            (T.SELECTED, T.WRITTEN),
            (T.WRITTEN, T.TESTED),
            (T.TESTED, T.SOLVED),
            (T.SOLVED, T.ACCEPTED),
            (T.SOLVED, T.DISCARDED),
            (T.TESTED, T.DISCARDED),  # too few candidates passed the static gates to vote
            *((s, T.REJECTED) for s in (T.PLANNED, T.SELECTED, T.WRITTEN)),
            *((s, T.ERROR) for s in OPEN),
        ),
        stages=(
            *stages_of(
                extract,
                merge,
                evolve,
                evolve_seed,
                close_tree,
                plan,
                difficulty,
                select,
                write,
                tests,
                solve,
                verify,
            ),
            *measurement.STAGES,
        ),
        load=load_context,
        next_action=next_action,
        give_up=measurement.measure_or(give_up),
        unit_of=lambda action: getattr(action, "task_id", None),
        given_up=Q(status=T.ERROR, reason__regex=GIVE_UP_REASON),
        seeds=seed_counts,
        accepted_problems=recorded_problems,
    )
)
