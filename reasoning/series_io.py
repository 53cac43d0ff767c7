"""A series as the document's files (design document 004, section 9): ``state.json`` (the run
state of section 6.1) and ``runs.jsonl`` (one line per finished run, holding its ExampleResults
of section 6.2), written out and read back in.

The document prints the fields of both but not the files' exact layout; the shapes here are
ours where it is silent: a runs.jsonl line is ``{"run", "created_at", "score", "ema",
"ema_by_reasoning_type", "ema_by_difficulty", "type_scores", "results": [ExampleResult...]}``.
Reading is lenient about what it does not need: a line may also be a single ExampleResult, its
list may be called ``results``, ``examples`` or ``items``, and unknown fields are kept."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from .engine import ema as ema_engine
from .models import ImportedExample, ItemStatus, ReasoningSeries, RunStatus
from .services import series_create, series_find

EXAMPLE_LISTS = ("results", "examples", "items")
RUN_NUMBER_KEYS = ("run", "run_number", "run_id", "run_count")


def state_json(series: ReasoningSeries) -> dict:
    """The series' state.json (section 6.1's RunState)."""
    return ema_engine.RunState(
        ema=series.ema,
        run_count=series.run_count,
        current_difficulty=series.current_difficulty,
        ema_by_reasoning_type=dict(series.ema_by_reasoning_type),
        ema_by_difficulty=dict(series.ema_by_difficulty),
    ).to_json()


def _example(
    *, question, reasoning_type, difficulty, question_index, answer, score, rationale, created_at
) -> dict:
    return {
        "question": question,
        "tags": {
            "reasoning_type": reasoning_type,
            "difficulty": difficulty,
            "question_index": question_index,
        },
        "answer": answer,
        "score": score,
        "rationale": rationale,
        "created_at": created_at,
    }


def runs_jsonl_lines(series: ReasoningSeries) -> list[dict]:
    """The series' runs.jsonl, oldest first: runs imported into it, then every finished run of
    its campaigns (a run still going, or one a cancelled campaign left, is not appended, as the
    document appends a run when it ends)."""
    lines: list[dict] = []
    imported: dict[int | None, list[ImportedExample]] = defaultdict(list)
    for example in series.imported.order_by("id"):
        imported[example.run_number].append(example)
    for number, examples in imported.items():
        lines.append(
            {
                "run": number,
                "imported": True,
                "results": [
                    {
                        **e.extra,
                        **_example(
                            question=e.question,
                            reasoning_type=e.reasoning_type,
                            difficulty=e.difficulty,
                            question_index=e.question_index,
                            answer=e.answer,
                            score=e.score,
                            rationale=e.rationale,
                            created_at=e.created_at,
                        ),
                    }
                    for e in examples
                ],
            }
        )
    runs = (
        series.runs.filter(status=RunStatus.COMPLETED)
        .select_related("reasoning__campaign")
        .order_by("number")
    )
    for run in runs:
        results = []
        for item in run.items.order_by("position"):
            example = _example(
                question=item.question,
                reasoning_type=item.reasoning_type,
                difficulty=item.difficulty,
                question_index=item.question_index,
                answer=item.answer,
                score=item.score,
                rationale=item.rationale or item.status_reason,
                created_at=item.created_at.isoformat(),
            )
            if item.status != ItemStatus.JUDGED:
                example["status"] = item.status  # not scored: in no mean
            results.append(example)
        lines.append(
            {
                "run": run.number,
                "campaign": run.reasoning.campaign.name,
                "created_at": (run.finished_at or run.started_at).isoformat(),
                "score": run.score,
                "type_scores": run.type_scores,
                "ema": run.ema_after,
                "ema_by_reasoning_type": run.ema_by_type_after,
                "ema_by_difficulty": run.ema_by_difficulty_after,
                "levels": run.levels,
                "results": results,
            }
        )
    return lines


def runs_jsonl(series: ReasoningSeries) -> str:
    return "".join(
        json.dumps(line, ensure_ascii=False, sort_keys=False) + "\n"
        for line in runs_jsonl_lines(series)
    )


@dataclass(frozen=True)
class ImportReport:
    series: ReasoningSeries
    runs: int
    examples: int
    state: bool


def _run_number(line: dict) -> int | None:
    for key in RUN_NUMBER_KEYS:
        value = line.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
    return None


def _parse_example(raw, where: str) -> dict:
    if not isinstance(raw, dict):
        raise ValidationError(f"{where}: an ExampleResult must be an object")
    question = raw.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ValidationError(f"{where}: 'question' must be a non-empty string")
    tags = raw.get("tags") if isinstance(raw.get("tags"), dict) else raw
    reasoning_type = tags.get("reasoning_type")
    if not isinstance(reasoning_type, str) or not reasoning_type.strip():
        raise ValidationError(f"{where}: 'tags.reasoning_type' must be a non-empty string")
    difficulty = tags.get("difficulty")
    if isinstance(difficulty, bool) or not isinstance(difficulty, int) or not 1 <= difficulty <= 10:
        raise ValidationError(f"{where}: 'tags.difficulty' must be a whole number 1-10")
    index = tags.get("question_index", 0)
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ValidationError(f"{where}: 'tags.question_index' must be a whole number >= 0")
    score = raw.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
        raise ValidationError(f"{where}: 'score' must be a number or null")
    known = {"question", "tags", "answer", "score", "rationale", "created_at"}
    return {
        "question": question.strip(),
        "reasoning_type": reasoning_type.strip()[:60],
        "difficulty": difficulty,
        "question_index": index,
        "answer": str(raw.get("answer") or ""),
        "score": None if score is None else float(score),
        "rationale": str(raw.get("rationale") or ""),
        "created_at": str(raw.get("created_at") or "")[:64],
        "extra": {k: v for k, v in raw.items() if k not in known},
    }


def parse_runs_jsonl(lines: Iterable[str]) -> list[tuple[int | None, dict]]:
    """(run number, example fields) for every ExampleResult of a runs.jsonl; ValidationError
    names the line."""
    found = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"runs.jsonl line {number}: not JSON ({exc.msg})") from exc
        if not isinstance(line, dict):
            raise ValidationError(f"runs.jsonl line {number}: not a JSON object")
        run = _run_number(line)
        listed = next((line[k] for k in EXAMPLE_LISTS if isinstance(line.get(k), list)), None)
        if listed is None:
            if "question" not in line:
                continue  # a line without examples (a run's summary alone): nothing to keep
            listed = [line]
        for k, raw in enumerate(listed, start=1):
            found.append((run, _parse_example(raw, f"runs.jsonl line {number}, example {k}")))
    return found


@transaction.atomic
def series_import(
    *, name: str, state: dict | None = None, runs_lines: Iterable[str] | None = None
) -> ImportReport:
    """Bring a benchmark made outside BenchForge into the series ``name`` (created when it does
    not exist): its state.json becomes the state the series' next campaign starts from, and the
    ExampleResults of its runs.jsonl the prior questions its generator must avoid (section 4.2);
    run numbers continue after the imported ones. Only into a series without runs of its own
    (ValidationError otherwise, or naming a bad field or line)."""
    examples = parse_runs_jsonl(runs_lines or [])
    base = None
    if state is not None:
        if not isinstance(state, dict):
            raise ValidationError("state.json must hold a JSON object")
        try:
            base = ema_engine.RunState.from_json(state)
        except ValueError as exc:
            raise ValidationError(f"state.json: {exc}") from exc
    series = series_find(name)
    if series is None:
        series = series_create(name=name)
    series = ReasoningSeries.objects.select_for_update().get(pk=series.pk)
    if series.runs.exists():
        raise ValidationError(
            f"series {series.name!r} already has runs of its own: import into a new series"
        )
    if base is not None:
        series.base_state = base.to_json()
        for field in ("ema", "run_count", "current_difficulty"):
            setattr(series, field, getattr(base, field))
        series.ema_by_reasoning_type = dict(base.ema_by_reasoning_type)
        series.ema_by_difficulty = dict(base.ema_by_difficulty)
        series.save()
    ImportedExample.objects.bulk_create(
        ImportedExample(series=series, run_number=run, **fields) for run, fields in examples
    )
    return ImportReport(
        series=series,
        runs=len({run for run, _ in examples}),
        examples=len(examples),
        state=base is not None,
    )
