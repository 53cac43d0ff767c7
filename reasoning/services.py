"""Writes of reasoning campaigns: creation, the step machine, level and run closing, human
overrides with the EMA recomputed.

The loop of section 11 is one sequential stream per campaign (every question is conditioned
on the questions before it), advanced one action at a time by ``reasoning_advance``: the
caller claims the campaign row with a conditional UPDATE (a lease), the next action is worked
out from the rows alone, and its result is stored. A worker killed at any instant loses at most
the action in flight; the unique (run, type, difficulty, index) constraint means a rerun never
duplicates an item, and the run state is saved after each difficulty level.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from evolution.llm import CallContext, LLMClient, mark_unparsable
from evolution.models import Campaign, ModelEndpoint
from evolution.models.campaigns import CampaignKind
from evolution.streams import runner
from evolution.streams.kinds import unit_transition
from evolution.streams.runner import StepReport

from .config import ReasoningSettings
from .engine import ema as ema_engine
from .engine import judging, plan, prompts, report, similarity
from .models import (
    ItemStatus,
    JudgeSeat,
    ReasoningCampaign,
    ReasoningItem,
    ReasoningRun,
    ResultLogEntry,
    RunStatus,
)

log = logging.getLogger(__name__)
KIND_NAME = "reasoning"


# --------------------------------------------------------------------------- creation


@transaction.atomic
def reasoning_campaign_create(
    *,
    name: str,
    generation_endpoint: ModelEndpoint,
    answering_endpoint: ModelEndpoint,
    judge_endpoints: list[ModelEndpoint],
    quality_endpoint: ModelEndpoint | None = None,
    settings: dict | None = None,
    budget_max_calls: int | None = None,
    budget_max_tokens: int | None = None,
    budget_max_cost=None,
    created_by=None,
) -> Campaign:
    """Validate the settings (ValidationError names each bad key) and create a draft campaign of
    kind "reasoning" with its role endpoints and judge seats (first judge = "evaluation")."""
    if not name.strip():
        raise ValidationError({"name": ["a campaign needs a name"]})
    validated = ReasoningSettings.from_dict(settings)
    judges = list(judge_endpoints)
    if not judges:
        raise ValidationError({"judge_endpoints": ["choose at least one evaluation model"]})
    if len({j.pk for j in judges}) != len(judges):
        raise ValidationError({"judge_endpoints": ["a judge model is listed twice"]})
    endpoints = [generation_endpoint, answering_endpoint, *judges]
    if quality_endpoint is not None:
        endpoints.append(quality_endpoint)
    campaign = Campaign.objects.create(
        name=name.strip(),
        kind=CampaignKind.REASONING,
        role_endpoints={
            "generation": generation_endpoint.pk,
            "answering": answering_endpoint.pk,
            "evaluation": judges[0].pk,
            **({"quality": quality_endpoint.pk} if quality_endpoint else {}),
        },
        settings=validated.to_dict(),
        budget_max_calls=budget_max_calls,
        budget_max_tokens=budget_max_tokens,
        budget_max_cost=budget_max_cost,
        replayed=all(e.is_replay for e in endpoints),
        created_by=created_by,
    )
    rc = ReasoningCampaign.objects.create(
        campaign=campaign,
        generation_endpoint=generation_endpoint,
        answering_endpoint=answering_endpoint,
        quality_endpoint=quality_endpoint,
        current_difficulty=validated.difficulty_start,
    )
    JudgeSeat.objects.bulk_create(
        JudgeSeat(reasoning=rc, endpoint=endpoint, position=i) for i, endpoint in enumerate(judges)
    )
    return campaign


# --------------------------------------------------------------------------- the step machine


@dataclass(frozen=True)
class Action:
    name: str  # start_run | generate | answer | judge | close_level | finished
    cell: plan.Cell | None = None
    item_id: int | None = None


@dataclass
class Ctx:
    rc: ReasoningCampaign
    settings: ReasoningSettings
    run: ReasoningRun | None

    @property
    def campaign(self) -> Campaign:
        return self.rc.campaign

    def chat(self, endpoint, messages, *, role, template, key, temperature, max_tokens):
        client = LLMClient(endpoint, CallContext(campaign_id=self.rc.pk))
        return client.chat(
            messages,
            role=role,
            template=template.name,
            template_version=template.version,
            replay_key=f"reasoning;{key};role={role}",
            temperature=temperature,
            max_tokens=max_tokens,
        )


def _load(campaign_id: int) -> Ctx:
    rc = ReasoningCampaign.objects.select_related("campaign").get(pk=campaign_id)
    settings = ReasoningSettings.from_dict(rc.campaign.settings)
    run = rc.runs.filter(status=RunStatus.RUNNING).first()
    return Ctx(rc=rc, settings=settings, run=run)


def work_finished(rc: ReasoningCampaign, settings: ReasoningSettings) -> bool:
    return rc.run_count >= settings.runs and not rc.runs.filter(status=RunStatus.RUNNING).exists()


def next_action(ctx: Ctx) -> Action:
    """The next thing to do, from the rows alone (so a rerun after a crash picks up here)."""
    run = ctx.run
    if run is None:
        if ctx.rc.run_count >= ctx.settings.runs:
            return Action("finished")
        return Action("start_run")
    difficulty = ctx.rc.current_difficulty
    items = {
        (i.reasoning_type, i.question_index): i
        for i in run.items.filter(difficulty=difficulty).only(
            "id", "reasoning_type", "question_index", "status"
        )
    }
    for cell in plan.level_cells(difficulty, run.plan):
        item = items.get((cell.reasoning_type, cell.question_index))
        if item is None:
            return Action("generate", cell=cell)
        if item.status == ItemStatus.GENERATED:
            return Action("answer", item_id=item.pk)
        if item.status == ItemStatus.ANSWERED:
            return Action("judge", item_id=item.pk)
    return Action("close_level")


def reasoning_advance(
    *, campaign_id: int, ticket: str | None = None, schedule: bool = False
) -> StepReport:
    """Advance the campaign by one action through the shared runner (evolution.streams)."""
    return runner.advance(kind=KIND_NAME, stream_id=campaign_id, ticket=ticket, schedule=schedule)


# --------------------------------------------------------------------------- actions


def _log(rc_id: int, event: str, payload: dict, *, run=None, item=None) -> None:
    ResultLogEntry.objects.create(
        reasoning_id=rc_id, run=run, item=item, event=event, payload=payload
    )


def _start_run(ctx: Ctx, action: Action) -> None:
    with transaction.atomic():
        rc = ReasoningCampaign.objects.select_for_update().get(pk=ctx.rc.pk)
        if rc.runs.filter(status=RunStatus.RUNNING).exists():
            return
        run_plan = plan.run_plan(
            type_names=ctx.settings.type_names,
            num_questions=ctx.settings.num_questions,
            ema_by_type=rc.ema_by_reasoning_type,
            weak_area_focus=ctx.settings.weak_area_focus,
            weak_area_types=ctx.settings.weak_area_types,
            weak_area_extra=ctx.settings.weak_area_extra,
        )
        run = ReasoningRun.objects.create(reasoning=rc, number=rc.run_count + 1, plan=run_plan)
        rc.current_difficulty = ctx.settings.difficulty_start
        rc.save(update_fields=["current_difficulty", "updated_at"])
        _log(rc.pk, "run_started", {"run": run.number, "plan": run_plan}, run=run)


def _replay_key(run: ReasoningRun, cell: plan.Cell) -> str:
    return (
        f"run={run.number};d={cell.difficulty};type={cell.reasoning_type};q={cell.question_index}"
    )


def _position(ctx: Ctx, cell: plan.Cell) -> int:
    for index, other in enumerate(plan.round_robin(ctx.settings.difficulties, ctx.run.plan)):
        if other == cell:
            return index
    raise ValueError(f"{cell} is not in the run's plan")


def _item_create(ctx: Ctx, cell: plan.Cell, **fields) -> ReasoningItem | None:
    try:
        with transaction.atomic():
            return ReasoningItem.objects.create(
                run=ctx.run,
                reasoning=ctx.rc,
                reasoning_type=cell.reasoning_type,
                difficulty=cell.difficulty,
                question_index=cell.question_index,
                position=_position(ctx, cell),
                **fields,
            )
    except IntegrityError:
        return None  # made by an earlier attempt of this step: never a duplicate


def _generate(ctx: Ctx, action: Action) -> None:
    """Generate the cell's next question with the novelty focus; regenerate a draft that is too
    similar to a prior question, or that the quality filter rejects, up to the bound."""
    cell, s, rc = action.cell, ctx.settings, ctx.rc
    prior = list(
        ReasoningItem.objects.filter(reasoning=rc, reasoning_type=cell.reasoning_type)
        .exclude(question="")
        .order_by("id")
        .values_list("pk", "difficulty", "question")
    )
    in_cell = [(pk, q) for pk, d, q in prior if d == cell.difficulty]
    history = [(pk, q) for pk, d, q in prior if d != cell.difficulty]
    history = history[-s.history_window :] if s.history_window else []
    # The measured check covers what the prompt asks to avoid: the cell and the recent history.
    compared = in_cell + history
    gen_template = prompts.load("generation")
    key = _replay_key(ctx.run, cell)
    rejected: list[dict] = []
    quality: dict = {}
    for attempt in range(s.max_regenerations + 1):
        focus = prompts.select_focus(
            reasoning_type=cell.reasoning_type,
            difficulty=cell.difficulty,
            prior_questions_for_type=[(d, q) for _, d, q in prior],
            prior_questions_in_cell=[q for _, q in in_cell],
            history_window=s.history_window,
            rejected=rejected,
        )
        messages = prompts.generation_messages(
            reasoning_type=cell.reasoning_type,
            type_description=s.type_description(cell.reasoning_type),
            difficulty=cell.difficulty,
            focus=focus,
        )
        result = ctx.chat(
            rc.generation_endpoint,
            messages,
            role="generation",
            template=gen_template,
            key=f"{key};attempt={attempt}",
            temperature=s.generation_temperature,
            max_tokens=s.generation_max_tokens,
        )
        question = prompts.clean_question(result.content)
        if not question:
            mark_unparsable(result.call_id, "the generation answer holds no question")
            rejected.append({"question": "", "reason": "empty answer", "similarity": None})
            continue
        near = similarity.nearest(question, compared)
        if near.score > s.similarity_threshold:
            rejected.append(
                {
                    "question": question,
                    "reason": f"too similar to an earlier question "
                    f"(similarity {near.score:.2f} > {s.similarity_threshold})",
                    "similarity": round(near.score, 4),
                    "similar_to": near.key,
                }
            )
            continue
        if s.quality_filter:
            quality = _quality_check(ctx, cell, question, key=f"{key};attempt={attempt}")
            if not quality["accepted"]:
                rejected.append(
                    {
                        "question": question,
                        "reason": f"quality filter: {quality['reason']}",
                        "similarity": round(near.score, 4),
                    }
                )
                continue
        _item_create(
            ctx,
            cell,
            status=ItemStatus.GENERATED,
            question=question,
            similarity=round(near.score, 4),
            similar_to_id=near.key,
            regenerations=attempt,
            rejected_drafts=rejected,
            quality=quality,
        )
        return
    item = _item_create(
        ctx,
        cell,
        status=ItemStatus.FILTERED,
        status_reason=f"no acceptable question in {s.max_regenerations + 1} attempts",
        regenerations=s.max_regenerations,
        rejected_drafts=rejected,
        quality=quality,
    )
    if item is not None:
        _log(rc.pk, "item_filtered", {"cell": _cell_dict(cell), "drafts": rejected}, run=ctx.run)


def _quality_check(ctx: Ctx, cell: plan.Cell, question: str, *, key: str) -> dict:
    rc, s = ctx.rc, ctx.settings
    endpoint = rc.quality_endpoint or rc.seats.order_by("position").first().endpoint
    template = prompts.load("quality")
    result = ctx.chat(
        endpoint,
        prompts.quality_messages(
            reasoning_type=cell.reasoning_type,
            type_description=s.type_description(cell.reasoning_type),
            difficulty=cell.difficulty,
            question=question,
        ),
        role="quality",
        template=template,
        key=key,
        temperature=s.evaluation_temperature,
        max_tokens=s.evaluation_max_tokens,
    )
    verdict = judging.parse_quality(result.content)
    if verdict.parse_failure:
        mark_unparsable(result.call_id, verdict.reason)
    return {
        "accepted": verdict.accepted,
        "reason": verdict.reason,
        "parse_failure": verdict.parse_failure,
        "model": endpoint.name,
    }


def _cell_dict(cell: plan.Cell) -> dict:
    return {
        "reasoning_type": cell.reasoning_type,
        "difficulty": cell.difficulty,
        "question_index": cell.question_index,
    }


def _item_key(item: ReasoningItem) -> str:
    return (
        f"run={item.run.number};d={item.difficulty};type={item.reasoning_type};"
        f"q={item.question_index}"
    )


def _answer(ctx: Ctx, action: Action) -> None:
    item = ReasoningItem.objects.select_related("run").get(pk=action.item_id)
    template = prompts.load("answering")
    result = ctx.chat(
        ctx.rc.answering_endpoint,
        prompts.answering_messages(question=item.question),
        role="answering",
        template=template,
        key=_item_key(item),
        temperature=ctx.settings.answering_temperature,
        max_tokens=ctx.settings.answering_max_tokens,
    )
    unit_transition(
        KIND_NAME,
        ReasoningItem.objects.filter(pk=item.pk),
        source=ItemStatus.GENERATED,
        target=ItemStatus.ANSWERED,
        answer=result.content,
        answered_at=timezone.now(),
    )


def _judge(ctx: Ctx, action: Action) -> None:
    item = ReasoningItem.objects.select_related("run").get(pk=action.item_id)
    template = prompts.load("evaluation")
    messages = prompts.evaluation_messages(
        reasoning_type=item.reasoning_type,
        difficulty=item.difficulty,
        question=item.question,
        answer=item.answer,
    )
    verdicts = []
    for seat in ctx.rc.seats.select_related("endpoint").order_by("position"):
        result = ctx.chat(
            seat.endpoint,
            messages,
            role="evaluation",
            template=template,
            key=f"{_item_key(item)};judge={seat.position}",
            temperature=ctx.settings.evaluation_temperature,
            max_tokens=ctx.settings.evaluation_max_tokens,
        )
        verdict = judging.parse_verdict(result.content, judge=seat.endpoint.name)
        if verdict.parse_failure:
            mark_unparsable(result.call_id, verdict.reason)
        verdicts.append(verdict)
    agg = judging.aggregate(verdicts, ctx.settings.judge_aggregation)
    now = timezone.now()
    updated = unit_transition(
        KIND_NAME,
        ReasoningItem.objects.filter(pk=item.pk),
        source=ItemStatus.ANSWERED,
        target=ItemStatus.JUDGED,
        judge_score=agg.score,
        rationale=agg.rationale,
        verdicts=[v.to_dict() for v in verdicts],
        parse_failures=agg.parse_failures,
        disagreement=agg.disagreement,
        judged_at=now,
    )
    if updated:
        item.refresh_from_db()
        _log(ctx.rc.pk, "item_scored", example_result(item), run=item.run, item=item)


def example_result(item: ReasoningItem) -> dict:
    """The document's ExampleResult (section 6.2), plus how the score came about."""
    return {
        "question": item.question,
        "tags": {
            "reasoning_type": item.reasoning_type,
            "difficulty": item.difficulty,
            "question_index": item.question_index,
        },
        "answer": item.answer,
        "score": item.score,
        "rationale": item.rationale,
        "created_at": item.created_at.isoformat(),
        "run": item.run.number,
        "judge_score": item.judge_score,
        "parse_failures": item.parse_failures,
        "disagreement": item.disagreement,
        "similarity": item.similarity,
        "regenerations": item.regenerations,
    }


def _scores(items) -> list[float]:
    return [i.score for i in items if i.score is not None]


def _state_of(rc: ReasoningCampaign) -> ema_engine.RunState:
    return ema_engine.RunState(
        ema=rc.ema,
        run_count=rc.run_count,
        current_difficulty=rc.current_difficulty,
        ema_by_reasoning_type=dict(rc.ema_by_reasoning_type),
        ema_by_difficulty=dict(rc.ema_by_difficulty),
    )


def _store_state(rc: ReasoningCampaign, state: ema_engine.RunState) -> None:
    rc.ema = state.ema
    rc.run_count = state.run_count
    rc.current_difficulty = state.current_difficulty
    rc.ema_by_reasoning_type = state.ema_by_reasoning_type
    rc.ema_by_difficulty = state.ema_by_difficulty
    rc.state_saved_at = timezone.now()
    rc.save(
        update_fields=[
            "ema",
            "run_count",
            "current_difficulty",
            "ema_by_reasoning_type",
            "ema_by_difficulty",
            "state_saved_at",
            "updated_at",
        ]
    )


def _close_level(ctx: Ctx, action: Action) -> None:
    """Save point: the level's EMA, the next difficulty (adaptive or not), and when the run is
    over the overall and per-type EMAs and the report; all in one transaction."""
    s = ctx.settings
    with transaction.atomic():
        rc = (
            ReasoningCampaign.objects.select_for_update()
            .select_related("campaign")
            .get(pk=ctx.rc.pk)
        )
        run = ReasoningRun.objects.select_for_update().get(pk=ctx.run.pk)
        difficulty = rc.current_difficulty
        if any(level["difficulty"] == difficulty for level in run.levels):
            return  # closed by an earlier attempt whose commit we did not see
        items = list(run.items.filter(difficulty=difficulty))
        level_score = ema_engine.mean(_scores(items))
        state = _state_of(rc)
        state.update_difficulty(difficulty, level_score, s.alpha)
        level_ema = state.ema_by_difficulty.get(str(difficulty))
        nxt = plan.next_difficulty(
            current=difficulty,
            end=s.difficulty_end,
            adaptive=s.adaptive_difficulty,
            level_emas=[level.get("ema") for level in run.levels] + [level_ema],
            mastery=s.adaptive_mastery,
            floor=s.adaptive_floor,
            patience=s.adaptive_patience,
        )
        level = {
            "difficulty": difficulty,
            "score": level_score,
            "ema": level_ema,
            "items": len(items),
            "next": nxt.difficulty,
            "reason": nxt.reason,
        }
        run.levels = [*run.levels, level]
        if nxt.difficulty is not None:
            state.current_difficulty = nxt.difficulty
            run.save(update_fields=["levels"])
            _store_state(rc, state)
            _log(rc.pk, "level_completed", {"run": run.number, **level}, run=run)
            return
        run_items = list(run.items.all())
        run.score = ema_engine.mean(_scores(run_items))
        run.type_scores = {
            entry["name"]: ema_engine.mean(
                _scores(i for i in run_items if i.reasoning_type == entry["name"])
            )
            for entry in run.plan
        }
        state.finish_run(run.score, run.type_scores, s.alpha)
        state.current_difficulty = s.difficulty_start
        run.status = RunStatus.COMPLETED
        run.stop_reason = nxt.reason[:300]
        run.finished_at = timezone.now()
        _snapshot(run, state)
        _store_state(rc, state)
        run.report = render_run_report(rc, run, s)
        run.save()
        _log(rc.pk, "level_completed", {"run": run.number, **level}, run=run)
        _log(
            rc.pk,
            "run_finished",
            {
                "run": run.number,
                "score": run.score,
                "type_scores": run.type_scores,
                "ema": state.ema,
                "ema_by_reasoning_type": state.ema_by_reasoning_type,
                "ema_by_difficulty": state.ema_by_difficulty,
                "run_count": state.run_count,
            },
            run=run,
        )


def _snapshot(run: ReasoningRun, state: ema_engine.RunState) -> None:
    run.ema_after = state.ema
    run.ema_by_type_after = dict(state.ema_by_reasoning_type)
    run.ema_by_difficulty_after = dict(state.ema_by_difficulty)


def render_run_report(rc: ReasoningCampaign, run: ReasoningRun, s: ReasoningSettings) -> str:
    items = run.items.order_by("position")
    data = report.ReportData(
        campaign=rc.campaign.name,
        run_number=run.number,
        started_at=run.started_at.isoformat(timespec="seconds"),
        finished_at=(run.finished_at or timezone.now()).isoformat(timespec="seconds"),
        alpha=s.alpha,
        run_score=run.score,
        ema=run.ema_after,
        run_count=run.number,
        next_difficulty=s.difficulty_start,
        type_names=[entry["name"] for entry in run.plan],
        type_scores=run.type_scores,
        ema_by_reasoning_type=run.ema_by_type_after,
        levels=run.levels,
        ema_by_difficulty=run.ema_by_difficulty_after,
        stop_reason=run.stop_reason,
        replayed=rc.campaign.replayed,
        items=[
            report.ReportItem(
                reasoning_type=i.reasoning_type,
                difficulty=i.difficulty,
                question_index=i.question_index,
                question=i.question,
                answer=i.answer,
                score=i.score,
                rationale=i.rationale or i.status_reason,
                created_at=i.created_at.isoformat(timespec="seconds"),
                status=i.status,
                parse_failures=i.parse_failures,
                disagreement=i.disagreement,
                overridden=i.is_overridden,
                similarity=i.similarity,
                regenerations=i.regenerations,
            )
            for i in items
        ],
    )
    return report.render(data)


ACTIONS = {
    "start_run": _start_run,
    "generate": _generate,
    "answer": _answer,
    "judge": _judge,
    "close_level": _close_level,
}


# --------------------------------------------------------------------------- human override


@transaction.atomic
def item_override_score(*, item_id: int, score: float | None, reason: str, user) -> ReasoningItem:
    """Replace the judges' score of a judged item (1.0 correct, 0.0 incorrect; None removes the
    override) and recompute every EMA from the scores. ValidationError on a bad request."""
    item = ReasoningItem.objects.select_related("run", "reasoning").get(pk=item_id)
    rc = ReasoningCampaign.objects.select_for_update().get(pk=item.reasoning_id)
    if item.status != ItemStatus.JUDGED:
        raise ValidationError("Only judged items can be overridden.")
    if score is not None and score not in (0.0, 1.0):
        raise ValidationError("The override must be correct (1) or incorrect (0).")
    if not (reason or "").strip():
        raise ValidationError("Say why the judge's score is overridden.")
    previous = item.score
    item.override_score = score
    item.override_reason = reason.strip() if score is not None else ""
    item.override_by = user if score is not None else None
    item.override_at = timezone.now() if score is not None else None
    item.save(update_fields=["override_score", "override_reason", "override_by", "override_at"])
    state = reasoning_state_recompute(reasoning=rc)
    _log(
        rc.pk,
        "score_overridden" if score is not None else "override_removed",
        {
            "run": item.run.number,
            "tags": {
                "reasoning_type": item.reasoning_type,
                "difficulty": item.difficulty,
                "question_index": item.question_index,
            },
            "judge_score": item.judge_score,
            "previous_score": previous,
            "score": item.score,
            "reason": reason.strip(),
            "by": getattr(user, "username", ""),
            "ema": state.ema,
        },
        run=item.run,
        item=item,
    )
    return item


def reasoning_state_recompute(*, reasoning: ReasoningCampaign) -> ema_engine.RunState:
    """Recompute the run state from the item scores (overrides included): every closed level's
    score and EMA, every finished run's score, per-type scores, snapshot and report. The
    current difficulty (the resume point) is kept. Call inside a transaction holding the
    campaign row."""
    rc = reasoning
    s = ReasoningSettings.from_dict(rc.campaign.settings)
    runs = list(rc.runs.order_by("number").prefetch_related("items"))
    scores = []
    for run in runs:
        items = list(run.items.all())
        level_scores = [
            (
                level["difficulty"],
                ema_engine.mean(_scores(i for i in items if i.difficulty == level["difficulty"])),
            )
            for level in run.levels
        ]
        finished = run.status == RunStatus.COMPLETED
        type_scores = {
            entry["name"]: ema_engine.mean(
                _scores(i for i in items if i.reasoning_type == entry["name"])
            )
            for entry in run.plan
        }
        scores.append(
            ema_engine.RunScores(
                level_scores=level_scores,
                finished=finished,
                run_score=ema_engine.mean(_scores(items)) if finished else None,
                type_scores=type_scores if finished else {},
            )
        )
    state, snapshots = ema_engine.fold_runs(scores, s.alpha)
    state.current_difficulty = rc.current_difficulty
    for run, run_scores, snap in zip(runs, scores, snapshots, strict=True):
        run.levels = [
            {**level, "score": score, "ema": level_ema}
            for level, (_, score), level_ema in zip(
                run.levels, run_scores.level_scores, snap.level_emas, strict=True
            )
        ]
        if run_scores.finished:
            run.score = run_scores.run_score
            run.type_scores = run_scores.type_scores
            run.ema_after = snap.ema
            run.ema_by_type_after = snap.ema_by_reasoning_type
            run.ema_by_difficulty_after = snap.ema_by_difficulty
            run.report = render_run_report(rc, run, s)
        run.save()
    _store_state(rc, state)
    return state


# --------------------------------------------------------------------------- in-process runner


def reasoning_run_inline(
    *, campaign_id: int, max_steps: int | None = None, on_progress=None
) -> Campaign:
    """Drive the campaign in this process (the demo, `run_campaign --inline`, tests) until it
    finished, is paused or cancelled, or ``max_steps`` steps ran (it then stays running)."""
    return runner.run_inline(campaign_id=campaign_id, max_steps=max_steps, on_progress=on_progress)
