"""Malformed stored data never turns a public page into a 500 (issue #34).

The scoring service writes every run's summary and the database refuses any other writer
(test_public_record.py), but a row stored before those guards, or by the database's owner
with them switched off, may be malformed: a string, a list, missing keys, values of the wrong
type. The public leaderboard then shows that model's row as "result unavailable",
``GET /api/releases/<id>/leaderboard`` answers it with ``"available": false`` and no scores,
and the question leaderboard does the same; every other row is unchanged.
"""

from __future__ import annotations

import json
import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.urls import reverse

from releases import leaderboard
from releases.leaderboard import board
from releases.models import LeaderboardRun, QuestionRun, QuestionSample, RunState
from tests.factories import ModelEndpointFactory

from .board_world import board_world

pytestmark = pytest.mark.django_db

ESTIMATE = {"value": 0.5, "low": 0.0, "high": 1.0, "n": 2}
QUESTION_SUMMARY = {
    "samples_per_question": 1,
    "questions": 2,
    "score": ESTIMATE,
    "breakdown": {"type": {"alpha": ESTIMATE}, "level": {"1": ESTIMATE}},
    "modes": {"judge": 2},
    "infra_errors": 0,
    "judges": ["judge-1"],
    "per_question": [],
}


@pytest.fixture
def world():
    cache.clear()
    yield board_world()
    cache.clear()


def _store_behind_the_guard(table: str, pk: int, summary: str) -> None:
    """Malformed data cannot be written any more: put it there with the guard switched off, as
    a row written before the guards, or by the database's owner, would be."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending events: ALTER may run
        cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        cursor.execute(f"UPDATE {table} SET summary = %s::jsonb WHERE id = %s", [summary, pk])
        cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
    if table == "releases_leaderboardrun":
        # What the board reads of the run, as migration 0015 stores it from such a summary.
        top, problems = board.figures_of(json.loads(summary))
        _store_figures_behind_the_guard(pk, json.dumps(top), json.dumps(problems))


def _store_figures_behind_the_guard(pk: int, top: str, problems: str) -> None:
    table = "releases_leaderboardrunfigures"
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        cursor.execute(
            f"UPDATE {table} SET summary = %s::jsonb, problems = %s::jsonb WHERE run_id = %s",
            [top, problems, pk],
        )
        cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")


def _row(body: str, model: str) -> str:
    return re.search(rf'<tr data-model="{re.escape(model)}">.*?</tr>', body, re.S).group(0)


@pytest.mark.parametrize(
    "summary",
    [
        '"97%"',
        "[]",
        "{}",
        '{"k": [1]}',
        '{"pass": "0.97"}',
        '{"pass": {"1": {"value": "high"}}}',
        '{"pass": {"1": {"low": 0.1}}}',
        '{"pass": {"1": {"value": 0.5}}, "k": "one"}',
        '{"pass": {"1": {"value": 0.5}}, "breakdown": {"origin": {"evolved": 3}}}',
        '{"pass": {"1": {"value": 0.5}}, "contamination": "none"}',
    ],
)
def test_a_malformed_stored_score_shows_as_unavailable_never_a_500(world, summary):
    run = LeaderboardRun.objects.get(release=world.release, label="model-a")
    _store_behind_the_guard("releases_leaderboardrun", run.pk, summary)
    for query in ("", "?after=2024-01-01", "?sort=d:hard", "?sort=passk&dir=asc"):
        cache.clear()
        page = Client().get(world.url + query)
        assert page.status_code == 200, query
        body = page.content.decode()
        assert "result unavailable" in _row(body, "model-a")
        assert "result unavailable" not in _row(body, "model-b")
    api = Client().get(f"/api/releases/{world.release.pk}/leaderboard")
    assert api.status_code == 200
    rows = {r["model"]: r for r in api.json()}
    assert rows["model-a"]["available"] is False and rows["model-a"]["pass1"] is None
    assert rows["model-b"]["available"] is True and rows["model-b"]["pass1"]["value"] > 0


@pytest.mark.parametrize(
    ("top", "problems", "windowed_only"),
    [
        ('"97%"', "{}", False),
        ('{"pass": {"1": {"value": "high"}}}', "{}", False),
        (None, '{"public_id": ["x"], "pass": {"1": ["high"]}}', True),
        (None, '{"public_id": ["x", "y"], "pass": {"1": [0.5]}}', True),
    ],
)
def test_malformed_stored_figures_show_as_unavailable_never_a_500(
    world, top, problems, windowed_only
):
    """The figures the board reads (``LeaderboardRunFigures``), not the summary, malformed."""
    run = LeaderboardRun.objects.get(release=world.release, label="model-a")
    stored = run.figures
    _store_figures_behind_the_guard(run.pk, top or json.dumps(stored.summary), problems)
    for query in ("", "?after=2024-01-01"):
        cache.clear()
        page = Client().get(world.url + query)
        assert page.status_code == 200, query
        body = page.content.decode()
        unavailable = "result unavailable" in _row(body, "model-a")
        assert unavailable == (bool(query) or not windowed_only), query
        assert "result unavailable" not in _row(body, "model-b")


def _scored_question_run(world, label: str) -> QuestionRun:
    """A question run completed through the scoring service's own path (``execute_run``)."""
    run = QuestionRun.objects.create(
        release=world.release, endpoint=ModelEndpointFactory(), label=label
    )
    run.judges.set([ModelEndpointFactory(name=f"{label}-judge")])
    done = leaderboard.execute_run(
        QuestionRun,
        run.pk,
        label="question run",
        load=lambda run: [],
        work=lambda run, questions: None,
        samples=lambda run: QuestionSample.objects.none(),
        what="answer endpoint",
        summarise=lambda run: QUESTION_SUMMARY,
    )
    assert done.state == RunState.COMPLETED
    return done


@pytest.mark.parametrize(
    "summary",
    [
        '"97%"',
        "{}",
        '{"score": {"value": "high"}}',
        '{"score": {"value": 0.5, "low": 0, "high": 1, "n": 2}, "breakdown": {"level": {"x": null}}}',
    ],
)
def test_a_malformed_question_run_summary_shows_as_unavailable(world, summary):
    broken = _scored_question_run(world, "Broken-Answerer")
    _scored_question_run(world, "Sound-Answerer")
    _store_behind_the_guard("releases_questionrun", broken.pk, summary)
    cache.clear()
    url = reverse(
        "releases:public_question_leaderboard",
        args=[world.release.benchmark.slug, world.release.version],
    )
    page = Client().get(url)
    assert page.status_code == 200
    body = page.content.decode()
    assert "result unavailable" in _row(body, "Broken-Answerer")
    sound = _row(body, "Sound-Answerer")
    assert "50.0%" in sound and "result unavailable" not in sound
