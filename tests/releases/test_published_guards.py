"""What a published release shows cannot change: the benchmark's identity, the release's
source lists, completed leaderboard runs, and TRUNCATE; the admin answers a refusal with a
message; the application's database role cannot disable the guards. (How a result is written
at all, and errata: test_public_record.py.)"""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.db import IntegrityError, InternalError, connection, transaction
from django.urls import reverse

from releases import leaderboard, services
from releases.models import Benchmark, LeaderboardRun, LeaderboardSample, RunState
from tests.factories import ModelEndpointFactory
from tests.support.gate_rules import SELECTION_TIME_OK
from tests.support.scoring import complete

DB_ERRORS = (IntegrityError, InternalError)


def _raw(sql: str, params=()) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def test_a_benchmark_keeps_its_public_identity_once_a_release_is_frozen(frozen):
    _, release = frozen
    bench = release.benchmark
    for column, value in (
        ("slug", "moved"),
        ("name", "Renamed"),
        ("license", "proprietary"),
        ("description", "rewritten"),
    ):
        with pytest.raises(DB_ERRORS, match="frozen"):
            _raw(f"UPDATE releases_benchmark SET {column} = %s WHERE id = %s", [value, bench.pk])
    with pytest.raises(DB_ERRORS), transaction.atomic():
        Benchmark.objects.filter(pk=bench.pk).update(slug="moved")
    with pytest.raises(DB_ERRORS, match="cannot be deleted"):
        _raw("DELETE FROM releases_benchmark WHERE id = %s", [bench.pk])
    bench.refresh_from_db()
    assert bench.slug != "moved"
    # What no page shows stays editable: the defaults for the next release's gate.
    Benchmark.objects.filter(pk=bench.pk).update(default_rules={"min_reviews": 1})


def test_a_benchmark_with_only_drafts_stays_editable(db):
    bench = services.benchmark_create(
        default_rules=SELECTION_TIME_OK, name="Draft Only", description="d"
    )
    services.release_create(benchmark=bench, campaigns=[], notes="")
    Benchmark.objects.filter(pk=bench.pk).update(slug="draft-only-2", license="mit")
    bench.refresh_from_db()
    assert (bench.slug, bench.license) == ("draft-only-2", "mit")


def test_a_frozen_releases_source_lists_cannot_change(frozen):
    world, release = frozen
    with pytest.raises(DB_ERRORS, match="immutable"), transaction.atomic():
        release.campaigns.clear()
    with pytest.raises(DB_ERRORS, match="immutable"), transaction.atomic():
        release.problem_sets.add(world.campaign.seed_set)
    assert list(release.campaigns.all()) == [world.campaign]


@pytest.mark.parametrize(
    "table", ["releases_releaseitem", "releases_releasetest", "releases_release_campaigns"]
)
def test_truncate_is_refused_while_a_frozen_release_exists(frozen_tx, table):
    # Committed rows: TRUNCATE in the transaction that inserted them fails for another reason.
    _, release = frozen_tx
    with pytest.raises(DB_ERRORS, match="TRUNCATE .* refused"):
        _raw(f"TRUNCATE {table} CASCADE")
    assert release.items.count() == release.item_count


def _completed_run(release, world) -> LeaderboardRun:
    qid = world.problem("E-OK").public_id
    content = json.dumps({"question_id": qid, "code_list": ["print(1)"]})
    run = leaderboard.run_create_from_upload(release=release, label="m", content=content)
    return complete(run)


def test_a_completed_run_on_a_published_release_is_immutable(published):
    world, release = published
    run = _completed_run(release, world)
    with pytest.raises(DB_ERRORS, match="public record"), transaction.atomic():
        LeaderboardRun.objects.filter(pk=run.pk).delete()
    with pytest.raises(DB_ERRORS, match="public record"):
        _raw("UPDATE releases_leaderboardrun SET label = 'better' WHERE id = %s", [run.pk])
    with pytest.raises(DB_ERRORS, match="immutable"):
        _raw("UPDATE releases_leaderboardsample SET verdict = 'AC' WHERE run_id = %s", [run.pk])
    with pytest.raises(DB_ERRORS, match="immutable"), transaction.atomic():
        LeaderboardSample.objects.filter(run=run).delete()
    assert LeaderboardRun.objects.filter(pk=run.pk, label="m").exists()


def test_a_completed_run_is_immutable_before_its_release_is_published_too(frozen):
    # Publishing shows every completed run: one changed while the release was frozen would
    # be published as changed.
    world, release = frozen
    run = _completed_run(release, world)
    with pytest.raises(DB_ERRORS, match="public record"), transaction.atomic():
        LeaderboardRun.objects.filter(pk=run.pk).update(label="renamed")
    with pytest.raises(DB_ERRORS, match="public record"), transaction.atomic():
        LeaderboardRun.objects.filter(pk=run.pk).delete()


def test_a_run_in_progress_moves_between_the_job_states_and_may_be_deleted(frozen):
    _, release = frozen
    run = leaderboard.run_create(release=release, endpoint=ModelEndpointFactory(), samples=1)
    runs = LeaderboardRun.objects.filter(pk=run.pk)
    runs.update(state=RunState.RUNNING, claim="t")
    runs.update(state=RunState.FAILED, error="lost", claim="")
    runs.update(state=RunState.QUEUED, error="", recovery="run again")
    # What it evaluates is fixed when it is created.
    with pytest.raises(DB_ERRORS, match="fixed when it is created"), transaction.atomic():
        runs.update(label="renamed")
    runs.delete()  # no result yet: nothing public is lost


def test_the_admin_shows_a_message_not_a_500_when_a_frozen_edit_is_refused(frozen, personas):
    _, release = frozen
    bench = release.benchmark
    url = reverse("admin:releases_benchmark_change", args=[bench.pk])
    response = personas.admin.client.post(
        url,
        {
            "name": bench.name,
            "slug": "moved-away",
            "description": bench.description,
            "license": bench.license,
            "default_rules": "{}",
        },
        follow=True,
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "Not saved" in page and "frozen" in page
    bench.refresh_from_db()
    assert bench.slug != "moved-away"


def test_the_application_role_cannot_get_past_the_guards(frozen, capsys):
    _, release = frozen
    item = release.items.first()
    role = "bf_test_app_role"
    # Roles are transactional in PostgreSQL: the test's rollback removes this one again.
    call_command("db_roles", "--app-role", role)
    assert "cannot own, truncate or disable triggers" in capsys.readouterr().out
    call_command("db_roles", "--app-role", role, "--check")

    with connection.cursor() as cursor:
        cursor.execute(f"SET ROLE {role}")
        try:
            # Ordinary work goes on: rows can be read and written.
            cursor.execute("SELECT count(*) FROM releases_releaseitem")
            assert cursor.fetchone()[0] == release.item_count
            for sql, message in (
                (f"UPDATE releases_releaseitem SET title = 'x' WHERE id = {item.pk}", "immutable"),
                ("ALTER TABLE releases_releaseitem DISABLE TRIGGER ALL", "must be owner"),
                ("TRUNCATE releases_releasetest", "permission denied"),
                ("SET session_replication_role = replica", "permission denied"),
            ):
                with pytest.raises(Exception, match=message), transaction.atomic():
                    cursor.execute(sql)
        finally:
            cursor.execute("RESET ROLE")
