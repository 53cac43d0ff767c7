"""The leaderboard of a released question set: answer models scored on the frozen questions.

``question_run_execute`` is idempotent per (run, question, sample): phase 1 asks the answer
model every missing answer and stores it ungraded; phase 2 has the run's judges grade every
ungraded answer, through the questions' problem source (the kind's own answering and judging
prompts: releases never import a kind). A question whose answer a curator confirmed (an
override counting it correct) is graded against that reference answer; the others by the
judges alone. A killed worker loses at most the calls in flight; a rerun does what is missing.

``question_run_summary``: the mean score over questions (each question's mean over its
samples; a sample the model could not answer scores 0) with a seeded bootstrap interval, and
the same per question type and per difficulty level.
"""

from __future__ import annotations

import contextlib
import logging
from collections import defaultdict

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from evolution.llm import LLMError
from evolution.sources import ProblemSource, source_for_model

from .leaderboard import parallel
from .models import Release, ReleaseQuestion, ReleaseState, RunState
from .question_models import QuestionRun, QuestionSample
from .stats import bootstrap_mean

log = logging.getLogger(__name__)
MAX_SAMPLES = 20
# A curator's override at least this high confirms the reference answer (services.py keeps
# the same bound for which answers may be released at all).
CONFIRMED_MIN_SCORE = 0.5


def _source() -> ProblemSource:
    return source_for_model(ReleaseQuestion._meta.get_field("reasoning_item").related_model)


def confirmed_reference(question: ReleaseQuestion) -> str | None:
    """The reference answer when a curator confirmed it (a human override counting it
    correct); None when only the campaign's judges scored it."""
    override = (question.provenance or {}).get("override") or {}
    score = override.get("score")
    if score is not None and score >= CONFIRMED_MIN_SCORE:
        return question.reference_answer
    return None


def question_run_create(
    *, release: Release, endpoint, judges, samples: int = 1, label: str = "", by=None
) -> QuestionRun:
    """A queued evaluation of ``endpoint`` on the release's questions graded by ``judges``;
    the caller enqueues ``tasks.question_run``."""
    if release.state == ReleaseState.DRAFT:
        raise ValidationError("Freeze the release before evaluating models on it.")
    if not release.questions.exists():
        raise ValidationError("This release has no questions to answer.")
    judges = list(judges)
    if not judges:
        raise ValidationError({"judges": "Choose at least one judge."})
    if not 1 <= samples <= MAX_SAMPLES:
        raise ValidationError({"samples": f"Answers per question must be 1 to {MAX_SAMPLES}."})
    run = QuestionRun.objects.create(
        release=release,
        endpoint=endpoint,
        label=(label or endpoint.name).strip()[:200],
        samples_per_question=samples,
        created_by=by,
    )
    run.judges.set(judges)
    return run


def _key(run: QuestionRun, question: ReleaseQuestion, index: int) -> str:
    return f"release={run.release_id};question={question.public_id};sample={index}"


def _answer(run: QuestionRun, question: ReleaseQuestion, index: int) -> None:
    details: dict = {}
    try:
        answer = _source().answer_question(
            question=question.question, endpoint=run.endpoint, replay_key=_key(run, question, index)
        )
    except LLMError as exc:
        answer, details = "", {"llm_error": str(exc)[:500]}
    with contextlib.suppress(IntegrityError), transaction.atomic():
        QuestionSample.objects.create(
            run=run,
            question=question,
            sample_index=index,
            answer=answer,
            # No answer (the call failed after its retries): a wrong answer, not graded.
            score=None if answer.strip() else 0.0,
            mode="" if answer.strip() else "no answer",
            details=details,
        )


def _grade(run: QuestionRun, sample: QuestionSample, judges: list) -> None:
    q = sample.question
    graded = _source().score_answer(
        question=q.question,
        item_type=q.reasoning_type,
        difficulty=q.difficulty,
        answer=sample.answer,
        judges=judges,
        reference_answer=confirmed_reference(q),
        replay_key=_key(run, q, sample.sample_index),
    )
    QuestionSample.objects.filter(pk=sample.pk, score__isnull=True).update(
        score=graded["score"],
        mode=graded["mode"],
        details={**sample.details, **{k: v for k, v in graded.items() if k != "score"}},
    )


def _claim(run_id: int) -> QuestionRun | None:
    claimed = QuestionRun.objects.filter(
        pk=run_id, state__in=[RunState.QUEUED, RunState.RUNNING, RunState.FAILED]
    ).update(state=RunState.RUNNING, error="")
    if not claimed:
        return None
    return QuestionRun.objects.select_related("release", "endpoint").get(pk=run_id)


def question_run_execute(*, run_id: int) -> QuestionRun:
    """Answer and grade whatever is missing, then summarise. Safe to call again at any point;
    a completed run is returned as is. A judge whose call fails fails the run (the reason is
    kept); running it again grades what is left."""
    run = _claim(run_id)
    if run is None:
        return QuestionRun.objects.get(pk=run_id)
    questions = list(run.release.questions.order_by("position"))
    try:
        done = set(
            QuestionSample.objects.filter(run=run).values_list("question_id", "sample_index")
        )
        jobs = [
            (lambda q=q, i=i: _answer(run, q, i))
            for q in questions
            for i in range(run.samples_per_question)
            if (q.pk, i) not in done
        ]
        parallel(jobs, width=run.endpoint.concurrency_limit)
        judges = list(run.judges.order_by("name"))
        pending = list(
            QuestionSample.objects.filter(run=run, score__isnull=True).select_related("question")
        )
        width = max(1, min(j.concurrency_limit for j in judges)) if judges else 1
        parallel([(lambda s=s: _grade(run, s, judges)) for s in pending], width=width)
    except Exception as exc:
        log.exception("question run %s failed", run_id)
        QuestionRun.objects.filter(pk=run_id).update(
            state=RunState.FAILED, error=f"{exc.__class__.__name__}: {exc}"[:2000]
        )
        return QuestionRun.objects.get(pk=run_id)
    summary = question_run_summary(run=run)
    QuestionRun.objects.filter(pk=run_id).update(
        state=RunState.COMPLETED, summary=summary, finished_at=timezone.now()
    )
    return QuestionRun.objects.get(pk=run_id)


def question_run_summary(*, run: QuestionRun) -> dict:
    scores: dict[int, list[float]] = defaultdict(list)
    modes: dict[str, int] = defaultdict(int)
    for question_id, score, mode in QuestionSample.objects.filter(run=run).values_list(
        "question_id", "score", "mode"
    ):
        scores[question_id].append(score or 0.0)
        modes[mode or "ungraded"] += 1
    per_question = []
    for q in run.release.questions.order_by("position"):
        values = scores.get(q.pk, [])
        per_question.append(
            {
                "public_id": q.public_id,
                "type": q.reasoning_type,
                "level": q.difficulty,
                "n": len(values),
                # A missing sample scores 0, as an unanswered one does.
                "mean": sum(values) / run.samples_per_question,
                "reference": confirmed_reference(q) is not None,
            }
        )
    seed = run.bootstrap_seed

    def estimate(rows):
        return bootstrap_mean([r["mean"] for r in rows], seed=seed).to_dict() if rows else None

    breakdown: dict[str, dict] = {}
    for key in ("type", "level"):
        groups: dict = defaultdict(list)
        for r in per_question:
            groups[r[key]].append(r)
        breakdown[key] = {str(name): estimate(rows) for name, rows in sorted(groups.items())}
    return {
        "samples_per_question": run.samples_per_question,
        "questions": len(per_question),
        "score": estimate(per_question),
        "breakdown": breakdown,
        "modes": dict(modes),
        "judges": list(run.judges.order_by("name").values_list("name", flat=True)),
        "per_question": per_question,
    }


def public_question_leaderboard(*, release: Release) -> dict:
    """Completed runs best first, with the types and levels their breakdowns cover."""
    runs = list(
        QuestionRun.objects.filter(release=release, state=RunState.COMPLETED).order_by(
            "-finished_at"
        )
    )
    runs.sort(key=lambda r: -((r.summary.get("score") or {}).get("value") or 0.0))
    types = sorted({t for r in runs for t in r.summary.get("breakdown", {}).get("type", {})})
    levels = sorted(
        {lv for r in runs for lv in r.summary.get("breakdown", {}).get("level", {})}, key=int
    )
    return {"runs": runs, "types": types, "levels": levels}
