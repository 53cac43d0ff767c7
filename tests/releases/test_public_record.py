"""The public record of a release is append-only by construction (issue #34, Security 1-2).

A leaderboard run, its samples and its scores are written only by the scoring service: the
Django admin shows them read-only, and the database refuses a result written any other way
(the ORM's ``save()`` and ``update()``, raw SQL). A failed run never becomes completed by an
edit; a completed run never changes. Errata are append-only: a correction is a new erratum,
signed by the curator who records it; only freezing the version that fixes one records it as
fixed. Malformed stored scores show as an unavailable row, never a 500.
"""

from __future__ import annotations

import json
import re

import pytest
from django.contrib import admin
from django.core.cache import cache
from django.db import IntegrityError, InternalError, connection, transaction
from django.test import Client
from django.urls import reverse

from evolution import jobs
from releases import leaderboard, services
from releases.jobs import LEADERBOARD_RUN
from releases.models import (
    Erratum,
    ErratumKind,
    LeaderboardRun,
    LeaderboardSample,
    QuestionRun,
    QuestionSample,
    Release,
    RunState,
)
from tests.factories import ModelEndpointFactory

from .board_world import board_world

pytestmark = pytest.mark.django_db

DB_ERRORS = (IntegrityError, InternalError)
FORGED = {"k": [1], "pass": {"1": {"value": 0.97, "low": 0.95, "high": 0.99, "n": 3}}}


def _raw(sql: str, params=()) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def _failed_run(release: Release, public_id: str) -> LeaderboardRun:
    """A run the scoring service failed, with the samples it had stored (as the demo's
    published release ships two)."""
    content = json.dumps({"question_id": public_id, "code_list": ["print(1)"]})
    run = leaderboard.run_create_from_upload(release=release, label="Honest-Model", content=content)
    token = jobs.claim(LeaderboardRun, run.pk)
    jobs.finish(LeaderboardRun, run.pk, token, state=RunState.FAILED, error="sandbox down")
    run.refresh_from_db()
    assert run.state == RunState.FAILED
    return run


@pytest.fixture
def world():
    cache.clear()
    world = board_world()
    world.failed = _failed_run(world.release, world.ids["E-OK"])
    world.completed = LeaderboardRun.objects.get(release=world.release, label="model-a")
    yield world
    cache.clear()


def _public(world) -> tuple[str, list[dict]]:
    """The public leaderboard page's rows and the API's answer, fresh (no page cache)."""
    cache.clear()
    page = Client().get(world.url)
    assert page.status_code == 200
    api = Client().get(f"/api/releases/{world.release.pk}/leaderboard")
    assert api.status_code == 200
    rows = re.findall(r'data-model="([^"]+)"', page.content.decode())
    return rows, api.json()


def _snapshot(run: LeaderboardRun) -> tuple:
    run.refresh_from_db()
    samples = list(
        LeaderboardSample.objects.filter(run=run)
        .order_by("pk")
        .values_list("pk", "verdict", "code", "passed_tests")
    )
    return (run.state, run.label, run.summary, run.finished_at, run.endpoint_id, samples)


# --- (a) the Django admin --------------------------------------------------------------------


def _forged_post(run: LeaderboardRun) -> dict:
    """Every field of the admin's change form, with the failed run turned into a forged win."""
    return {
        "release": run.release_id,
        "endpoint": run.endpoint_id or "",
        "source": run.source,
        "label": "Forged-Model-X",
        "model_release_date": "",
        "samples_per_problem": run.samples_per_problem,
        "bootstrap_seed": run.bootstrap_seed,
        "state": RunState.COMPLETED,
        "error": "",
        "summary": json.dumps(FORGED),
        "created_by": "",
        "finished_at_0": "2025-01-01",
        "finished_at_1": "12:00:00",
        "sent_at_0": "",
        "sent_at_1": "",
        "claim": "",
        "heartbeat_at_0": "",
        "heartbeat_at_1": "",
        "lost_workers": 0,
        "recovery": "",
    }


def test_the_admin_cannot_forge_a_leaderboard_result(world, personas):
    before = _public(world)
    failed, completed = _snapshot(world.failed), _snapshot(world.completed)
    client = personas.admin.client
    for run in (world.failed, world.completed):
        url = reverse("admin:releases_leaderboardrun_change", args=[run.pk])
        page = client.get(url)
        assert page.status_code == 200  # it can be read ...
        response = client.post(url, _forged_post(run))  # ... not written
        assert response.status_code in (302, 403)
        delete = client.post(
            reverse("admin:releases_leaderboardrun_delete", args=[run.pk]), {"post": "yes"}
        )
        assert delete.status_code in (302, 403)
    add = client.post(reverse("admin:releases_leaderboardrun_add"), _forged_post(world.failed))
    assert add.status_code in (302, 403)

    assert _snapshot(world.failed) == failed
    assert _snapshot(world.completed) == completed
    assert not LeaderboardRun.objects.filter(label="Forged-Model-X").exists()
    assert _public(world) == before
    assert "Forged-Model-X" not in Client().get(world.url).content.decode()


def test_the_admin_shows_runs_and_errata_read_only(world, personas):
    ada = personas.admin.user
    request = type("Request", (), {"user": ada})()
    for model, obj in (
        (LeaderboardRun, world.failed),
        (Erratum, _erratum(world, personas.curator.user)),
    ):
        model_admin = admin.site._registry[model]
        assert model_admin.has_view_permission(request, obj)
        assert not model_admin.has_add_permission(request)
        assert not model_admin.has_change_permission(request, obj)
        assert not model_admin.has_delete_permission(request, obj)


# --- (b) the ORM, (c) raw SQL ------------------------------------------------------------------


def test_the_orm_cannot_complete_a_failed_run(world):
    before = _public(world)
    failed = _snapshot(world.failed)
    runs = LeaderboardRun.objects.filter(pk=world.failed.pk)
    with pytest.raises(DB_ERRORS), transaction.atomic():
        runs.update(state=RunState.COMPLETED, summary=FORGED)
    run = LeaderboardRun.objects.get(pk=world.failed.pk)
    run.state, run.summary, run.label = RunState.COMPLETED, FORGED, "Forged-Model-X"
    with pytest.raises(DB_ERRORS), transaction.atomic():
        run.save()
    # Through "running" in two steps is no way round: only the scoring service completes a run.
    with pytest.raises(DB_ERRORS), transaction.atomic():
        runs.update(state=RunState.RUNNING, claim="x")
        runs.update(state=RunState.COMPLETED, summary=FORGED)
    # A run cannot be born completed either.
    with pytest.raises(DB_ERRORS), transaction.atomic():
        LeaderboardRun.objects.create(
            release=world.release,
            source="upload",
            label="Forged-Model-X",
            state=RunState.COMPLETED,
            summary=FORGED,
        )
    assert _snapshot(world.failed) == failed
    assert _public(world) == before


def test_the_orm_cannot_change_a_completed_run_or_the_samples_of_any_run(world):
    before = _public(world)
    completed, failed = _snapshot(world.completed), _snapshot(world.failed)
    for run in (world.completed, world.failed):
        samples = LeaderboardSample.objects.filter(run=run)
        with pytest.raises(DB_ERRORS), transaction.atomic():
            samples.update(verdict="AC", passed_tests=9, total_tests=9)
        with pytest.raises(DB_ERRORS), transaction.atomic():
            samples.delete()
        with pytest.raises(DB_ERRORS), transaction.atomic():
            LeaderboardSample.objects.create(
                run=run, item=world.release.items.last(), sample_index=7, code="x", verdict="AC"
            )
    runs = LeaderboardRun.objects.filter(pk=world.completed.pk)
    for change in ({"summary": FORGED}, {"label": "Forged-Model-X"}, {"state": "failed"}):
        with pytest.raises(DB_ERRORS), transaction.atomic():
            runs.update(**change)
    with pytest.raises(DB_ERRORS), transaction.atomic():
        runs.delete()
    assert (_snapshot(world.completed), _snapshot(world.failed)) == (completed, failed)
    assert _public(world) == before


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE releases_leaderboardrun SET state = 'completed', summary = %s WHERE id = {failed}",
        "UPDATE releases_leaderboardrun SET summary = %s WHERE id = {completed}",
        "UPDATE releases_leaderboardrun SET label = 'Forged-Model-X' WHERE id = {failed}",
        "DELETE FROM releases_leaderboardrun WHERE id = {completed}",
        "UPDATE releases_leaderboardsample SET verdict = 'AC' WHERE run_id = {failed}",
        "UPDATE releases_leaderboardsample SET verdict = 'AC' WHERE run_id = {completed}",
        "DELETE FROM releases_leaderboardsample WHERE run_id = {failed}",
        "INSERT INTO releases_leaderboardrun (release_id, source, label, samples_per_problem, "
        "bootstrap_seed, state, error, summary, created_at, claim, lost_workers, recovery) "
        "SELECT release_id, 'upload', 'Forged-Model-X', 1, 0, 'completed', '', %s, now(), '', "
        "0, '' FROM releases_leaderboardrun WHERE id = {failed}",
    ],
)
def test_raw_sql_cannot_forge_a_result(world, sql):
    before = _public(world)
    completed, failed = _snapshot(world.completed), _snapshot(world.failed)
    statement = sql.format(failed=world.failed.pk, completed=world.completed.pk)
    with pytest.raises(DB_ERRORS):
        _raw(statement, [json.dumps(FORGED)] if "%s" in statement else [])
    assert (_snapshot(world.completed), _snapshot(world.failed)) == (completed, failed)
    assert _public(world) == before


# --- the scoring service's own transitions keep working --------------------------------------


def test_the_service_runs_a_failed_run_again_and_completes_it(world):
    run = world.failed
    assert jobs.job_run_again(job=LEADERBOARD_RUN, pk=run.pk)
    done = leaderboard.execute_run(
        LeaderboardRun,
        run.pk,
        label="leaderboard run",
        load=lambda run: {},
        work=lambda run, items: None,
        samples=lambda run: LeaderboardSample.objects.none(),
        what="endpoint",
        summarise=lambda run: leaderboard.run_summary(run=run),
    )
    assert done.state == RunState.COMPLETED and done.summary["problems"] == 3
    with pytest.raises(DB_ERRORS), transaction.atomic():
        LeaderboardRun.objects.filter(pk=run.pk).update(summary=FORGED)


def test_a_run_of_an_endpoint_is_created_queued(world):
    run = leaderboard.run_create(release=world.release, endpoint=ModelEndpointFactory(), samples=1)
    assert run.state == RunState.QUEUED


# --- errata -----------------------------------------------------------------------------------


def _erratum(world, curator) -> Erratum:
    return services.erratum_create(
        release=world.release,
        item_public_id=world.ids["E-OK"],
        kind=ErratumKind.TESTS,
        description="The large test expects the wrong sum.",
        by=curator,
    )


def _detail(world) -> str:
    cache.clear()
    url = reverse(
        "releases:public_detail", args=[world.release.benchmark.slug, world.release.version]
    )
    response = Client().get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_an_erratum_is_signed_by_the_curator_who_records_it(world, personas):
    erratum = _erratum(world, personas.curator.user)
    assert erratum.signed_by == personas.curator.user.username
    assert erratum.created_by == personas.curator.user and erratum.created_at is not None
    with pytest.raises(Exception, match="signed"):
        services.erratum_create(
            release=world.release,
            item_public_id=world.ids["E-OK"],
            kind=ErratumKind.TESTS,
            description="Nobody says who.",
            by=None,
        )
    # A correction is a new erratum, never an edit: both stay on the public page.
    services.erratum_create(
        release=world.release,
        item_public_id=world.ids["E-OK"],
        kind=ErratumKind.TESTS,
        description="Correction: it is the medium test, not the large one.",
        by=personas.admin.user,
    )
    page = _detail(world)
    assert "The large test expects the wrong sum." in page
    assert "Correction: it is the medium test" in page


def test_errata_of_a_published_release_cannot_be_edited_or_deleted(world, personas):
    erratum = _erratum(world, personas.curator.user)
    before = _detail(world)
    client = personas.admin.client
    url = reverse("admin:releases_erratum_change", args=[erratum.pk])
    assert client.get(url).status_code == 200
    response = client.post(
        url,
        {
            "release": erratum.release_id,
            "item_public_id": erratum.item_public_id,
            "kind": ErratumKind.OTHER,
            "description": "Nothing was ever wrong.",
            "fixed_in": "",
            "resolution": "",
            "created_by": "",
        },
    )
    assert response.status_code in (302, 403)
    delete = client.post(
        reverse("admin:releases_erratum_delete", args=[erratum.pk]), {"post": "yes"}
    )
    assert delete.status_code in (302, 403)

    rows = Erratum.objects.filter(pk=erratum.pk)
    with pytest.raises(DB_ERRORS), transaction.atomic():
        rows.update(description="Nothing was ever wrong.")
    with pytest.raises(DB_ERRORS), transaction.atomic():
        rows.delete()
    # "Fixed in" is recorded by freezing the version that fixes it, not by an edit.
    with pytest.raises(DB_ERRORS), transaction.atomic():
        rows.update(fixed_in=world.release, resolution="changed")
    for sql in (
        "UPDATE releases_erratum SET description = 'Nothing was ever wrong.' WHERE id = %s",
        "UPDATE releases_erratum SET signed_by = 'someone-else' WHERE id = %s",
        "DELETE FROM releases_erratum WHERE id = %s",
    ):
        with pytest.raises(DB_ERRORS):
            _raw(sql, [erratum.pk])
    erratum.refresh_from_db()
    assert erratum.description == "The large test expects the wrong sum."
    assert erratum.fixed_in_id is None and erratum.kind == ErratumKind.TESTS
    assert _detail(world) == before


# --- question runs: the same rules -------------------------------------------------------------

QUESTION_SUMMARY = {
    "samples_per_question": 1,
    "questions": 2,
    "score": {"value": 0.5, "low": 0.0, "high": 1.0, "n": 2},
    "breakdown": {
        "type": {"alpha": {"value": 0.5, "low": 0.0, "high": 1.0, "n": 2}},
        "level": {"1": {"value": 0.5, "low": 0.0, "high": 1.0, "n": 2}},
    },
    "modes": {"judge": 2},
    "infra_errors": 0,
    "judges": ["judge-1"],
    "per_question": [],
}


def _scored_question_run(world, label: str, summary: dict) -> QuestionRun:
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
        summarise=lambda run: summary,
    )
    assert done.state == RunState.COMPLETED
    return done


def _question_board(world) -> str:
    cache.clear()
    url = reverse(
        "releases:public_question_leaderboard",
        args=[world.release.benchmark.slug, world.release.version],
    )
    response = Client().get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_a_question_run_result_cannot_be_forged_or_changed(world):
    honest = _scored_question_run(world, "Honest-Answerer", QUESTION_SUMMARY)
    queued = QuestionRun.objects.create(
        release=world.release, endpoint=ModelEndpointFactory(), label="Queued-Answerer"
    )
    forged = {**QUESTION_SUMMARY, "score": {"value": 0.97, "low": 0.95, "high": 0.99, "n": 2}}
    before = _question_board(world)
    with pytest.raises(DB_ERRORS), transaction.atomic():
        QuestionRun.objects.filter(pk=queued.pk).update(state=RunState.COMPLETED, summary=forged)
    with pytest.raises(DB_ERRORS), transaction.atomic():
        QuestionRun.objects.filter(pk=honest.pk).update(summary=forged)
    with pytest.raises(DB_ERRORS), transaction.atomic():
        QuestionRun.objects.filter(pk=honest.pk).delete()
    with pytest.raises(DB_ERRORS), transaction.atomic():
        honest.judges.add(ModelEndpointFactory(name="lenient-judge"))
    with pytest.raises(DB_ERRORS):
        _raw(
            "UPDATE releases_questionrun SET state = 'completed', summary = %s WHERE id = %s",
            [json.dumps(forged), queued.pk],
        )
    honest.refresh_from_db()
    assert honest.summary == QUESTION_SUMMARY
    assert _question_board(world) == before
