"""Stage ``generate``: one question for a cell, conditioned on the questions before it, through the
quality check and the similarity filter (``engine/similarity.py``)."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from evolution.llm import mark_unparsable

from ..engine import judging, plan, prompts, similarity
from ..models import ItemStatus, ReasoningItem, ReasoningRun
from .common import Action, Ctx, _log


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
