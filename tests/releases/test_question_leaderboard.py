"""A released question set gets a leaderboard: an answer model answers every frozen question,
judges grade the answers (against the reference answer where a curator confirmed it), and the
score is broken down by question type and difficulty level."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from evolution.models import LLMCall, ModelEndpoint
from reasoning.models import ReasoningItem
from reasoning.services import item_override_score
from releases import services
from releases.leaderboard import questions as ql
from releases.models import QuestionRun, QuestionSample
from tests.reasoning.judged import judged_reasoning
from tests.support.fake_openai import FakeOpenAI, Fault
from tests.support.gate_rules import SELECTION_TIME_OK

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def fake_server():
    with FakeOpenAI() as server:
        yield server


class Graders:
    """The answer model answers "Final answer: 42"; the judge calls alpha answers correct and
    beta answers incorrect, and an answer graded against a reference is correct."""

    def __init__(self):
        self.prompts: list[tuple[str, str]] = []
        self.fail_answers_for = ""
        self.judge_down = False

    def __call__(self, body, headers):
        role = headers.get("x-benchforge-role", "")
        prompt = body["messages"][-1]["content"]
        self.prompts.append((role, prompt))
        if role == "answering":
            if self.fail_answers_for and self.fail_answers_for in prompt:
                return Fault.server_error(500)
            return "Let me think. Final answer: 42"
        if role == "evaluation":
            if self.judge_down:
                return Fault.server_error(503)
            correct = "Reference answer:" in prompt or "a alpha question" in prompt
            return json.dumps({"score": "correct" if correct else "incorrect", "rationale": "r"})
        return Fault.http_status(404)


def endpoint(server: FakeOpenAI, name: str) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name=name,
        provider="openai",
        base_url=server.base_url,
        model=name,
        concurrency_limit=4,
        timeout_s=30,
        max_retries=0,
    )


@pytest.fixture
def published(fake_server, personas):
    reasoning = judged_reasoning(
        fake_server, verdicts=[True] * 4, types=("alpha", "beta"), difficulty_end=2, runs=1
    )
    items = list(ReasoningItem.objects.filter(reasoning=reasoning).order_by("pk"))
    assert len(items) == 4 and all(i.score == 1.0 for i in items)
    # A curator confirms the answer of the beta question at level 2.
    confirmed = next(i for i in items if i.reasoning_type == "beta" and i.difficulty == 2)
    item_override_score(
        item_id=confirmed.pk, score=1.0, reason="checked by hand", user=personas.curator.user
    )
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="Reasoning-Bench")
    release = services.release_create(benchmark=bench)
    services.release_questions_add(release=release, items=items)
    release = services.release_publish(release=services.release_freeze(release=release))
    graders = Graders()
    fake_server.responder = graders
    return release, graders, endpoint(fake_server, "answerer"), endpoint(fake_server, "judge-1")


def test_a_curator_scores_an_answer_model_with_breakdowns_by_type_and_level(personas, published):
    release, graders, answerer, judge = published
    response = personas.curator.client.post(
        reverse("releases:question_run_new", args=[release.pk]),
        {"endpoint": answerer.pk, "judges": [judge.pk], "samples": 2},
    )
    assert response.status_code == 302
    run = QuestionRun.objects.get(release=release)
    assert (run.state, run.samples_per_question, run.label) == ("queued", 2, "answerer")

    run = ql.question_run_execute(run_id=run.pk)  # what the queued task runs
    assert run.state == "completed", run.error
    s = run.summary
    assert s["questions"] == 4 and s["samples_per_question"] == 2
    # alpha: correct at both levels; beta level 1 incorrect; beta level 2 graded against the
    # curator's reference answer.
    assert s["score"]["value"] == pytest.approx(0.75)
    assert s["breakdown"]["type"]["alpha"]["value"] == 1.0
    assert s["breakdown"]["type"]["beta"]["value"] == 0.5
    assert s["breakdown"]["level"]["1"]["value"] == 0.5
    assert s["breakdown"]["level"]["2"]["value"] == 1.0
    assert s["modes"] == {"judge": 6, "reference": 2}
    reference = release.questions.get(reasoning_type="beta", difficulty=2).reference_answer
    graded_with_reference = [p for r, p in graders.prompts if "Reference answer:" in p]
    assert len(graded_with_reference) == 2
    assert all(reference in p for p in graded_with_reference)

    # Idempotent: running it again asks nothing.
    calls = LLMCall.objects.count()
    assert ql.question_run_execute(run_id=run.pk).state == "completed"
    assert LLMCall.objects.count() == calls

    page = personas.anonymous.client.get(
        reverse(
            "releases:public_question_leaderboard",
            args=[release.benchmark.slug, release.version],
        )
    )
    body = page.content.decode()
    assert page.status_code == 200
    assert 'data-model="answerer"' in body
    assert "75.0%" in body and "level 2" in body and "<th>beta</th>" in body
    assert reference not in body  # the hidden test never reaches a public page
    detail = personas.anonymous.client.get(
        reverse("releases:public_detail", args=[release.benchmark.slug, release.version])
    )
    assert "question-leaderboard-link" in detail.content.decode()


def test_a_failed_answer_call_is_asked_again_never_scored_and_a_judge_outage_resumes(
    published, personas
):
    """An answer call that fails (HTTP 500 after the client's retries) is an infrastructure
    error, not a wrong answer: asked again, never graded; while it keeps failing the run fails
    naming the answer endpoint; once it answers, the run completes with that answer scored
    like any other and the failed calls counted on the page."""
    release, graders, answerer, judge = published
    first = release.questions.order_by("position").first()
    graders.fail_answers_for = first.question[:60]
    graders.judge_down = True
    run = ql.question_run_create(release=release, endpoint=answerer, judges=[judge])
    run = ql.question_run_execute(run_id=run.pk)
    assert run.state == "failed" and "503" in run.error
    unanswered = QuestionSample.objects.get(run=run, question=first)
    assert (unanswered.score, unanswered.mode) == (None, "IE")
    assert [e["status"] for e in unanswered.details["infra_errors"]] == [500, 500, 500]

    graders.judge_down = False
    run = ql.question_run_execute(run_id=run.pk)
    assert run.state == "failed"
    assert "answer endpoint 'answerer' keeps failing" in run.error and "HTTP 500" in run.error
    graded = QuestionSample.objects.filter(run=run, score__isnull=False)
    assert graded.count() == 3 and not graded.filter(mode="IE").exists()

    graders.fail_answers_for = ""
    run = ql.question_run_execute(run_id=run.pk)
    assert run.state == "completed", run.error
    assert QuestionSample.objects.filter(run=run).count() == 4
    assert "no answer" not in run.summary["modes"] and "IE" not in run.summary["modes"]
    assert run.summary["modes"] == {"judge": 3, "reference": 1}
    assert run.summary["infra_errors"] == 6  # three rounds in each of two executions
    page = personas.anonymous.client.get(
        reverse(
            "releases:public_question_leaderboard",
            args=[release.benchmark.slug, release.version],
        )
    )
    assert "6 failed calls asked again, not counted" in page.content.decode()


def test_a_draft_or_a_release_without_questions_cannot_be_scored(published):
    release, _, answerer, judge = published
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="Empty")
    empty = services.release_create(benchmark=bench)
    with pytest.raises(Exception, match="Freeze the release"):
        ql.question_run_create(release=empty, endpoint=answerer, judges=[judge])
    with pytest.raises(Exception, match="at least one judge"):
        ql.question_run_create(release=release, endpoint=answerer, judges=[])
