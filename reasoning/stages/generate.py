"""Stage ``generate``: one question for a cell, conditioned on the questions before it, through the
quality check and the similarity filter (``engine/similarity.py``).

A question is conditioned on the earlier questions of its own reasoning type only (the prompt's
focus, the history window and the similarity check all read that type's questions), so one step
drafts the action's cell and, side by side, the level's next cells up to the first of a type
already among them (``_cells``; with one question per cell, the document's default, that is the
level's every type): each type's questions stay one after the other, and the items are stored in
the level's order, as one cell after the other would store them. Each cell's answer and the
panel's verdicts are asked in the same thread after its question (``_chain``), and stored with
it."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from evolution.llm import fanout, mark_unparsable

from ..engine import judging, plan, prompts, similarity
from ..models import ImportedExample, ItemStatus, ReasoningItem, ReasoningRun
from . import answer, judge
from .common import Action, Ctx, log_event, raise_for_action


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


def _cells(ctx: Ctx, action: Action) -> list[plan.Cell]:
    """The action's cell (the level's first without an item), then the next cells of the level
    in its order, up to the first one whose type is already among them (its question waits for
    the one before it): one question per type, so the items are made in the level's order."""
    difficulty = action.cell.difficulty
    made = set(
        ctx.run.items.filter(difficulty=difficulty).values_list("reasoning_type", "question_index")
    )
    width = fanout.width_for(ctx.rc.generation_endpoint)
    cells = [action.cell]
    level = list(plan.level_cells(difficulty, ctx.run.plan))
    for cell in level[level.index(action.cell) + 1 :]:
        if (cell.reasoning_type, cell.question_index) in made:
            continue
        if len(cells) >= fanout.step_calls(width) or cell.reasoning_type in {
            c.reasoning_type for c in cells
        }:
            break
        cells.append(cell)
    return cells


def _generate(ctx: Ctx, action: Action) -> None:
    """Each cell's question is drafted, answered and judged in one thread (the answer depends on
    the question alone, the verdicts on both), the cells side by side and, when there are fewer
    cells than threads, the panel's seats of a cell side by side too. The items are then stored
    in cell order, each with its answer and score, as one cell after the other would store and
    log them (the ``answer`` and ``judge`` stages finish any item whose call failed)."""
    cells = _cells(ctx, action)
    seats = list(ctx.rc.seats.select_related("endpoint").order_by("position"))
    width = fanout.width_for(
        ctx.rc.generation_endpoint, ctx.rc.answering_endpoint, *(s.endpoint for s in seats)
    )
    seat_width = max(1, width // len(cells))
    outcomes = fanout.fan_out(
        [lambda c=c: _chain(ctx, c, seats, seat_width) for c in cells],
        min(width, len(cells)),
        return_exceptions=True,
    )
    answers, verdicts = [], []
    scoring = True  # the log keeps the level's order: no score after an item left unjudged
    for cell, outcome in zip(cells, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            scoring = False
            continue
        fields, result, results = outcome
        item = _item_create(ctx, cell, **fields)
        if item is not None and item.status == ItemStatus.FILTERED:
            log_event(
                ctx.rc.pk,
                "item_filtered",
                {"cell": _cell_dict(cell), "drafts": item.rejected_drafts},
                run=ctx.run,
            )
        if item is None or item.status != ItemStatus.GENERATED:
            continue
        answers.append(result)
        if isinstance(result, BaseException):
            scoring = False
            continue
        answer.store(item, result)
        failed = next((r for r in results if isinstance(r, BaseException)), None)
        verdicts.append(failed)
        if failed is not None:
            scoring = False
        elif scoring:
            item.refresh_from_db()
            judge.score(ctx, item, seats, results)
    # The action's cell's failure, then the first item's answer or verdicts, is the step's
    # error, counted as its own step's would be; the others' are left to their own steps.
    raise_for_action(outcomes)
    raise_for_action(answers)
    raise_for_action(verdicts)


def _chain(ctx: Ctx, cell: plan.Cell, seats, seat_width: int) -> tuple[dict, object, list]:
    """The cell's item fields, the answer to an accepted question and the panel's verdicts on
    it (a failure in its call's place; no verdicts without an answer)."""
    fields = _draft(ctx, cell)
    if fields["status"] != ItemStatus.GENERATED:
        return fields, None, []
    key = _replay_key(ctx.run, cell)
    try:
        result = answer.ask(ctx, fields["question"], key)
    except Exception as exc:  # the item waits for its answer; the step raises it
        return fields, exc, []
    results = fanout.fan_out(
        [
            lambda seat=seat: judge.ask_seat(
                ctx,
                seat,
                key=key,
                reasoning_type=cell.reasoning_type,
                difficulty=cell.difficulty,
                question=fields["question"],
                answer=result.content,
            )
            for seat in seats
        ],
        seat_width,
        return_exceptions=True,
    )
    return fields, result, results


def prior_questions(series_id: int, reasoning_type: str) -> list[tuple[object, int, str]]:
    """Every earlier question of ``reasoning_type`` in the series, oldest first, as (key,
    difficulty, question): the questions of runs imported from a runs.jsonl (key ("imported",
    id)), then those of every campaign of the series (key: the item's id). Section 9: "load
    prior questions for novelty from runs.jsonl"."""
    imported = [
        (("imported", pk), d, q)
        for pk, d, q in ImportedExample.objects.filter(
            series_id=series_id, reasoning_type=reasoning_type
        )
        .exclude(question="")
        .order_by("id")
        .values_list("pk", "difficulty", "question")
    ]
    made = list(
        ReasoningItem.objects.filter(reasoning__series_id=series_id, reasoning_type=reasoning_type)
        .exclude(question="")
        .order_by("id")
        .values_list("pk", "difficulty", "question")
    )
    return imported + made


def _draft(ctx: Ctx, cell: plan.Cell) -> dict:
    """The cell's next question with the novelty focus (section 4.2: the prompt names the
    series' earlier questions), as the item's fields. Its highest similarity to those questions
    is measured and stored; only with ``novelty_filter`` on (not in the document; off by
    default) is a draft above ``similarity_threshold`` regenerated. A draft the quality filter
    rejects is regenerated too; at the bound the cell is filtered (not scored)."""
    s, rc = ctx.settings, ctx.rc
    prior = prior_questions(rc.series_id, cell.reasoning_type)
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
            "generation",
            messages,
            gen_template,
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
        if s.novelty_filter and near.score > s.similarity_threshold:
            rejected.append(
                {
                    "question": question,
                    "reason": f"too similar to an earlier question "
                    f"(similarity {near.score:.2f} > {s.similarity_threshold})",
                    "similarity": round(near.score, 4),
                    "similar_to": near.key if isinstance(near.key, int) else None,
                    **({"similar_to_imported": near.key[1]} if isinstance(near.key, tuple) else {}),
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
        return {
            "status": ItemStatus.GENERATED,
            "question": question,
            "similarity": round(near.score, 4),
            "similar_to_id": near.key if isinstance(near.key, int) else None,
            "regenerations": attempt,
            "rejected_drafts": rejected,
            "quality": quality,
        }
    return {
        "status": ItemStatus.FILTERED,
        "status_reason": f"no acceptable question in {s.max_regenerations + 1} attempts",
        "regenerations": s.max_regenerations,
        "rejected_drafts": rejected,
        "quality": quality,
    }


def _quality_check(ctx: Ctx, cell: plan.Cell, question: str, *, key: str) -> dict:
    s = ctx.settings
    endpoint = ctx.endpoint_for("quality")
    template = prompts.load("quality")
    result = ctx.chat(
        "quality",
        prompts.quality_messages(
            reasoning_type=cell.reasoning_type,
            type_description=s.type_description(cell.reasoning_type),
            difficulty=cell.difficulty,
            question=question,
        ),
        template,
        endpoint=endpoint,
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
