"""A frozen release refuses modification in the database itself, not only in code."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, InternalError, connection, transaction

from releases import services
from releases.models import FrozenReleaseError, Release, ReleaseItem, ReleaseState, ReleaseTest

DB_ERRORS = (IntegrityError, InternalError)


def _raw(sql: str, params=()) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def test_the_database_rejects_updates_and_deletes_of_frozen_items_and_tests(frozen):
    _, release = frozen
    item = release.items.first()
    test = ReleaseTest.objects.filter(item=item, hidden=True).first()
    with pytest.raises(DB_ERRORS, match="immutable"):
        _raw("UPDATE releases_releaseitem SET title = 'tampered' WHERE id = %s", [item.pk])
    with pytest.raises(DB_ERRORS, match="immutable"):
        _raw("UPDATE releases_releasetest SET output_text = '42' WHERE id = %s", [test.pk])
    with pytest.raises(DB_ERRORS, match="immutable"):
        _raw("DELETE FROM releases_releasetest WHERE id = %s", [test.pk])
    with pytest.raises(DB_ERRORS, match="immutable"):
        _raw("DELETE FROM releases_releaseitem WHERE id = %s", [item.pk])
    with pytest.raises(DB_ERRORS, match="immutable"):
        _raw(
            "INSERT INTO releases_releasetest (item_id, tier, ordinal, hidden, input_text, "
            "output_text, provenance) VALUES (%s, 'small', 99, true, '', '', '{}')",
            [item.pk],
        )
    # Bulk paths skip save(): only the triggers stand in their way.
    with pytest.raises(DB_ERRORS), transaction.atomic():
        ReleaseItem.objects.filter(release=release).update(difficulty="easy")
    with pytest.raises(DB_ERRORS), transaction.atomic():
        ReleaseTest.objects.filter(item__release=release).delete()
    item.refresh_from_db()
    assert item.title != "tampered"
    assert ReleaseTest.objects.filter(item__release=release).count() == release.test_count


def test_the_database_rejects_changing_or_deleting_a_frozen_release_row(frozen):
    _, release = frozen
    with pytest.raises(DB_ERRORS, match="only frozen -> published"):
        _raw("UPDATE releases_release SET content_hash = 'x' WHERE id = %s", [release.pk])
    with pytest.raises(DB_ERRORS, match="only frozen -> published"):
        _raw("UPDATE releases_release SET state = 'draft' WHERE id = %s", [release.pk])
    with pytest.raises(DB_ERRORS, match="cannot be deleted"):
        _raw("DELETE FROM releases_release WHERE id = %s", [release.pk])
    # The one allowed step: frozen -> published.
    published = services.release_publish(release=release)
    assert published.state == ReleaseState.PUBLISHED
    with pytest.raises(DB_ERRORS, match="only frozen -> published"):
        _raw("UPDATE releases_release SET state = 'frozen' WHERE id = %s", [release.pk])


def test_model_guards_refuse_before_reaching_the_database(frozen):
    _, release = frozen
    item = release.items.first()
    item.title = "tampered"
    with pytest.raises(FrozenReleaseError):
        item.save()
    with pytest.raises(FrozenReleaseError):
        item.delete()
    test = ReleaseTest.objects.filter(item=item).first()
    test.output = "42\n"
    with pytest.raises(FrozenReleaseError):
        test.save()
    release.notes = "rewritten history"
    with pytest.raises(FrozenReleaseError, match="notes"):
        release.save()
    with pytest.raises(FrozenReleaseError):
        Release.objects.get(pk=release.pk).delete()


def test_a_draft_stays_editable(frozen):
    world, release = frozen
    draft = services.release_next(release=release)
    assert draft.version == "1.0.1" and draft.state == ReleaseState.DRAFT
    services.release_update(release=draft, notes="patch notes")
    draft.refresh_from_db()
    assert draft.notes == "patch notes"
    services.release_delete_draft(release=draft)
    assert not Release.objects.filter(pk=draft.pk).exists()
