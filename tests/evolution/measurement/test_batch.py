"""A curator measures a whole problem set from its page; real Celery workers ask the panel and
judge in the sandbox; problems that cannot be measured say why; a failing endpoint fails the
measurement naming it, and a retry from the page finishes it."""

from __future__ import annotations

import signal

import pytest
import redis
from django.conf import settings
from django.urls import reverse

from evolution.measurement.models import Measurement, MeasurementBatch, MeasurementState
from evolution.models import Problem, ProblemSet, TestCase
from tests.support.answers import fenced
from tests.support.fake_openai import Fault
from tests.support.workers import kill_group, start_worker, wait_for, wait_until_consuming

from .helpers import PanelAnswers, make_panel

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

DOUBLE = "Read an integer n from standard input and print 2n."
SQUARE = "Read an integer n from standard input and print n squared."


def stdio_problem(title: str, statement: str, tests: list[tuple[str, str]], **fields) -> Problem:
    problem = Problem.objects.create(title=title, statement=statement, harness="stdio", **fields)
    for i, (given, expected) in enumerate(tests):
        t = TestCase(problem=problem, tier="small", ordinal=i, hidden=True)
        t.input, t.output = given, expected
        t.save()
    return problem


@pytest.fixture
def worker():
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    proc = start_worker("measure", pool_args=("-c", "2"))
    try:
        wait_until_consuming()
        yield proc
    finally:
        kill_group(proc, signal.SIGTERM)


def test_a_curator_measures_a_problem_set_from_its_page(fake_server, personas, worker):
    double = stdio_problem("Double", DOUBLE, [("3\n", "6\n"), ("-4\n", "-8\n")])
    square = stdio_problem("Square", SQUARE, [("3\n", "9\n"), ("5\n", "25\n")])
    scored = stdio_problem(
        "Open", "Pack boxes as tightly as you can.", [("1\n", "")], comparison={"mode": "score"}
    )
    untested = Problem.objects.create(title="Untested", statement="Print 1.", harness="stdio")
    chosen = ProblemSet.objects.create(name="to measure")
    chosen.problems.set([double, square, scored, untested])
    fake_server.responder = PanelAnswers(
        {
            "print 2n": {
                "strong": fenced("print(2 * int(input()))"),
                "weak": fenced("print(int(input()) + 2)"),
            },
            "n squared": {"strong": fenced("n = int(input())\nprint(n * n)"), "weak": "sorry"},
        }
    )
    panel = make_panel(fake_server, ["strong", "weak"])
    client = personas.curator.client

    page = client.get(reverse("evolution:problem_list") + "?set=to+measure")
    assert "Measure this set with a panel" in page.content.decode()
    response = client.post(
        reverse("evolution:measure_set", args=[chosen.pk]),
        {"panel": panel.pk, "target_eval_k": 3},
    )
    batch = MeasurementBatch.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("evolution:measurement_batch", args=[batch.pk])

    wait_for(
        lambda: not batch.measurements.filter(state=MeasurementState.PENDING).exists(),
        120,
        "every measurement to finish",
    )
    by_problem = {m.problem_id: m for m in batch.measurements.all()}
    m = by_problem[double.pk]
    assert (m.state, m.passes, m.attempts) == ("completed", 3, 6)
    assert m.per_model["weak"]["verdicts"] == {"WA": 3}
    m = by_problem[square.pk]
    assert (m.state, m.passes, m.attempts) == ("completed", 3, 6)
    assert m.per_model["weak"]["verdicts"] == {"NC": 3}
    assert by_problem[scored.pk].state == "failed"
    assert "open-ended" in by_problem[scored.pk].reason
    assert by_problem[untested.pk].state == "failed"
    assert "no tests" in by_problem[untested.pk].reason

    body = client.get(reverse("evolution:measurement_batch", args=[batch.pk])).content.decode()
    assert "4 of 4 finished · 2 measured · 2 failed" in body
    assert "0.500 (3/6)" in body
    listing = client.get(reverse("evolution:problem_list") + "?set=to+measure").content.decode()
    assert '0.50 <span class="muted">(3/6, measurement)</span>' in listing


def test_a_failing_endpoint_fails_the_measurement_and_a_retry_finishes_it(
    fake_server, personas, worker
):
    double = stdio_problem("Double", DOUBLE, [("3\n", "6\n")])
    answers = PanelAnswers({"print 2n": {"strong": fenced("print(2 * int(input()))")}})
    answers.table["print 2n"]["down"] = Fault.server_error(502)
    fake_server.responder = answers
    panel = make_panel(fake_server, ["strong", "down"])
    client = personas.curator.client
    client.post(
        reverse("evolution:measure_problem", args=[double.public_id]),
        {"panel": panel.pk, "target_eval_k": 1},
    )
    m = Measurement.objects.get(problem=double)
    wait_for(
        lambda: Measurement.objects.get(pk=m.pk).state != MeasurementState.PENDING,
        120,
        "the measurement to give up on the endpoint",
    )
    m.refresh_from_db()
    assert m.state == MeasurementState.FAILED
    assert "'down' keeps failing" in m.reason and "HTTP 502" in m.reason
    # The answer that did arrive is kept (judged once every attempt has an answer).
    strong = m.runs.get(endpoint__name="strong")
    assert "2 * int(input())" in strong.code and strong.verdict == ""

    answers.table["print 2n"]["down"] = fenced("print(0)")
    client.post(reverse("evolution:measurement_retry", args=[m.pk]))
    wait_for(
        lambda: Measurement.objects.get(pk=m.pk).state == MeasurementState.COMPLETED,
        120,
        "the retried measurement to complete",
    )
    m.refresh_from_db()
    assert (m.passes, m.attempts) == (1, 2)
    assert sum(1 for model, _ in answers.asked if model == "strong") == 1
    page = client.get(reverse("evolution:problem_detail", args=[double.public_id]))
    assert "Measured pass@1 <strong>0.500</strong> (1/2)" in page.content.decode()
