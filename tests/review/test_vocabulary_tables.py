"""The reviewers' tag tables, as migrations leave them, say what evolution/vocabulary.py says: the
engine folds mutation families with the constant, reviewers tag with the tables, and a family
must mean the same tag in both."""

from __future__ import annotations

import pytest

from evolution.vocabulary import VOCABULARY, normalize_tag_key
from review.models import TagSynonym

pytestmark = pytest.mark.django_db


def test_every_vocabulary_spelling_names_its_tag_in_the_tables():
    tables = dict(TagSynonym.objects.values_list("key", "tag__name"))
    for name, synonyms in VOCABULARY.items():
        for spelling in (name, *synonyms):
            assert tables.get(normalize_tag_key(spelling)) == name, spelling


def test_search_alone_is_no_longer_backtracking():
    assert not TagSynonym.objects.filter(key="search").exists()
    assert TagSynonym.objects.get(key="graph search").tag.name == "graphs"


def test_the_migration_corrects_a_database_seeded_with_the_old_synonyms():
    """A database loaded before the correction has "search" meaning backtracking and none of
    the new spellings; migration 0005 leaves it as a fresh one."""
    import importlib

    from django.apps import apps

    from review.models import Tag

    migration = importlib.import_module("review.migrations.0005_family_synonyms")
    TagSynonym.objects.filter(key__in=list(migration.ADDED)).delete()
    TagSynonym.objects.create(key="search", tag=Tag.objects.get(name="backtracking"))

    migration.forward(apps, None)

    assert not TagSynonym.objects.filter(key="search").exists()
    tables = dict(TagSynonym.objects.values_list("key", "tag__name"))
    assert {key: tables.get(key) for key in migration.ADDED} == migration.ADDED
