"""The leaderboard of a released question set: answer models scored on the frozen questions.

``question_run_execute`` is idempotent per (run, question, sample): phase 1 asks the answer
model every missing answer and stores it ungraded; phase 2 has the run's judges grade every
ungraded answer, through the questions' problem source (the kind's own answering and judging
prompts: releases never import a kind). A question whose answer a curator confirmed (an
override counting it correct) is graded against that reference answer; the others by the
judges alone. A killed worker loses at most the calls in flight; a rerun does what is missing.
An answer call that fails is an infrastructure error (mode "IE"), asked again like the code
leaderboard's (``leaderboard.INFRA_TRIES`` rounds), never graded and never a wrong answer; an
answer endpoint that still fails fails the run naming it.

``question_run_summary``: the mean score over questions (each question's mean over its
samples; a sample missing, or answered empty by the model, scores 0) with a seeded bootstrap interval, and
the same per question type and per difficulty level.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict

from django.core.exceptions import ValidationError
from django.db import IntegrityError

from evolution.llm import LLMError
from evolution.sources import ProblemSource, source_for_model

from .. import public_record
from ..models import QuestionRun, QuestionSample, Release, ReleaseQuestion, ReleaseState, RunState
from . import (
    INFRA_ERROR,
    ask_missing_rounds,
    execute_run,
    infra_entry,
    parallel,
    summaries,
)
from .stats import bootstrap_mean

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


def _answer(run: QuestionRun, question: ReleaseQuestion, index: int, earlier=None) -> None:
    """Ask for one answer (missing, or ``earlier``: an infrastructure error) and store it. A
    call that fails is an infrastructure error (mode "IE", its status and message kept): asked
    again, never graded, never a wrong answer."""
    history = list((earlier.details if earlier is not None else {}).get("infra_errors", []))
    try:
        answer = _source().answer_question(
            question=question.question, endpoint=run.endpoint, replay_key=_key(run, question, index)
        )
    except LLMError as exc:
        history.append(infra_entry(exc))
        fields = {
            "answer": "",
            "score": None,
            "mode": INFRA_ERROR,
            "details": {"infra_errors": history[-10:]},
        }
    else:
        fields = {
            "answer": answer,
            # An empty answer is the model's own: a wrong answer, not graded.
            "score": None if answer.strip() else 0.0,
            "mode": "" if answer.strip() else "no answer",
            "details": {"infra_errors": history} if history else {},
        }
    if earlier is not None:
        with public_record.writing():  # answers are the scoring service's (migration 0013)
            QuestionSample.objects.filter(pk=earlier.pk, mode=INFRA_ERROR).update(**fields)
        return
    with contextlib.suppress(IntegrityError), public_record.writing():
        QuestionSample.objects.create(run=run, question=question, sample_index=index, **fields)


def _ask_missing(run: QuestionRun, questions: list) -> None:
    """Every answer not given yet (missing, or an infrastructure error), in up to
    ``INFRA_TRIES`` rounds."""
    ask_missing_rounds(
        QuestionSample.objects.filter(run=run),
        unit_field="question",
        state_field="mode",
        units=questions,
        per_unit=run.samples_per_question,
        ask=lambda q, i, earlier: _answer(run, q, i, earlier),
        width=run.endpoint.concurrency_limit,
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
    with public_record.writing():
        QuestionSample.objects.filter(pk=sample.pk, score__isnull=True).update(
            score=graded["score"],
            mode=graded["mode"],
            details={**sample.details, **{k: v for k, v in graded.items() if k != "score"}},
        )


def question_run_execute(*, run_id: int) -> QuestionRun:
    """Answer and grade whatever is missing, then summarise. Safe to call again at any point;
    a completed run, or one a live execution holds, is returned as is (``evolution.jobs``). A
    judge whose call fails fails the run (the reason is kept); running it again grades what is
    left."""
    return execute_run(
        QuestionRun,
        run_id,
        label="question run",
        load=lambda run: list(run.release.questions.order_by("position")),
        work=_answer_and_grade,
        samples=lambda run: QuestionSample.objects.filter(run=run, mode=INFRA_ERROR),
        what="answer endpoint",
        summarise=lambda run: question_run_summary(run=run),
    )


def _answer_and_grade(run: QuestionRun, questions: list) -> None:
    _ask_missing(run, questions)
    judges = list(run.judges.order_by("name"))
    pending = list(
        QuestionSample.objects.filter(run=run, score__isnull=True)
        .exclude(mode=INFRA_ERROR)
        .select_related("question")
    )
    width = max(1, min(j.concurrency_limit for j in judges)) if judges else 1
    parallel([(lambda s=s: _grade(run, s, judges)) for s in pending], width=width)


def question_run_summary(*, run: QuestionRun) -> dict:
    scores: dict[int, list[float]] = defaultdict(list)
    modes: dict[str, int] = defaultdict(int)
    failed_calls = 0
    for question_id, score, mode, details in QuestionSample.objects.filter(run=run).values_list(
        "question_id", "score", "mode", "details"
    ):
        failed_calls += len((details or {}).get("infra_errors") or [])
        if mode == INFRA_ERROR:  # no answer yet: not a sample
            continue
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
        # Answer calls that failed (transport or provider) and were asked again: never scored.
        "infra_errors": failed_calls,
        "judges": list(run.judges.order_by("name").values_list("name", flat=True)),
        "per_question": per_question,
    }


def public_question_leaderboard(*, release: Release) -> dict:
    """Completed runs best first, with the types and levels their breakdowns cover. A run
    whose stored summary cannot be read (``summaries.readable_question``) is listed last,
    marked ``available = False``, without scores: never a 500."""
    runs = list(
        QuestionRun.objects.filter(release=release, state=RunState.COMPLETED).order_by(
            "-finished_at"
        )
    )
    for run in runs:
        run.available = summaries.readable_question(run.summary) is not None
        if not run.available:
            run.summary = {}
    runs.sort(
        key=lambda r: (not r.available, -((r.summary.get("score") or {}).get("value") or 0.0))
    )
    types = sorted({t for r in runs for t in r.summary.get("breakdown", {}).get("type", {})})
    levels = sorted(
        {lv for r in runs for lv in r.summary.get("breakdown", {}).get("level", {})}, key=int
    )
    return {"runs": runs, "types": types, "levels": levels}
