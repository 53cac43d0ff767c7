"""The release content hash (format 2) covers everything the card and the exports show; hashes
stored in format 1 stay verifiable; the format of a frozen release cannot change."""

from __future__ import annotations

import copy
import json

import pytest
from django.db import DatabaseError, transaction

from releases import content, exports, services
from releases.models import Release
from tests.support.gate_rules import SELECTION_TIME_OK

from .builders import crafted_world


def test_a_frozen_release_is_hashed_in_format_2_and_verifies(frozen):
    _, release = frozen
    assert release.hash_format == content.FORMAT_V2
    assert content.verify(release)
    lines = list(exports.export_jsonl(release))
    assert content.release_hash_from_lines(lines) == release.content_hash
    manifest = exports.export_manifest(release)
    assert manifest["hash_format"] == content.FORMAT_V2


IDENTITY_CHANGES = {
    "benchmark slug": lambda r: setattr(r.benchmark, "slug", "renamed"),
    "benchmark name": lambda r: setattr(r.benchmark, "name", "Another name"),
    "licence": lambda r: setattr(r.benchmark, "license", "mit"),
    "benchmark description": lambda r: setattr(r.benchmark, "description", "Other text."),
    "version": lambda r: setattr(r, "patch", r.patch + 1),
    "release notes": lambda r: setattr(r, "notes", "Other notes."),
    "gate rules": lambda r: r.gate_rules.update(min_quality=1.0),
}


def shown(release) -> tuple[str, str]:
    """What a reader gets: the card and the project JSONL export (problem lines carry the
    benchmark's slug in their problem set's name)."""
    return exports.card_markdown(release), "".join(exports.export_jsonl(release))


@pytest.mark.parametrize("field", sorted(IDENTITY_CHANGES))
def test_changing_anything_the_card_or_an_export_shows_changes_the_hash(frozen, field):
    _, release = frozen
    card, jsonl = shown(release)
    changed = Release.objects.select_related("benchmark").get(pk=release.pk)
    changed.gate_rules = copy.deepcopy(changed.gate_rules)
    IDENTITY_CHANGES[field](changed)  # in memory only: the stored rows are frozen
    new_card, new_jsonl = shown(changed)
    assert (new_card, new_jsonl) != (card, jsonl)  # a reader sees the change ...
    assert content.compute_release_hash(changed) != release.content_hash  # ... so does the hash


def test_the_previous_version_and_the_source_lists_are_in_the_hash(db):
    world = crafted_world()
    bench = services.benchmark_create(
        default_rules=SELECTION_TIME_OK, name="Sources", description="d"
    )
    draft = services.release_create(benchmark=bench, campaigns=[world.campaign], notes="n")
    with_campaign = content.compute_release_hash(draft)
    draft.campaigns.clear()
    assert content.compute_release_hash(draft) != with_campaign
    draft.problem_sets.add(world.campaign.seed_set)
    with_set = content.compute_release_hash(draft)
    assert with_set != with_campaign
    identity = content.release_identity(draft)
    assert identity["sources"]["problem_sets"] == [
        [world.campaign.seed_set.pk, world.campaign.seed_set.name]
    ]
    assert content.release_identity(draft, previous_version="0.9.0")["previous"] == "0.9.0"
    assert identity["previous"] is None


@pytest.mark.parametrize("field", content.ITEM_LISTING_FIELDS)
def test_changing_anything_an_export_line_shows_of_an_item_changes_the_hash(frozen, field):
    _, release = frozen
    items = list(release.items.all())
    changed = copy.deepcopy(items[0])
    value = getattr(changed, field)
    replacement = {
        bool: lambda v: not v,
        int: lambda v: v + 100,
        list: lambda v: [*v, "extra-tag"],
        dict: lambda v: {**v, "extra": 1},
        type(None): lambda v: None,
    }.get(type(value), lambda v: f"{v}-changed")(value)
    if field == "created_on":
        from datetime import timedelta

        replacement = value + timedelta(days=1)
    setattr(changed, field, replacement)
    assert content.compute_release_hash(release, items=[changed, *items[1:]]) != (
        release.content_hash
    )
    # The same through the export: a line whose listing was edited no longer verifies.
    lines = [json.loads(line) for line in exports.export_jsonl(release)]
    line = next(x for x in lines if x["problem"]["public_id"] == items[0].public_id)
    line[field] = content.item_listing(changed)[field]
    edited = [json.dumps(x) for x in lines]
    assert content.release_hash_from_lines(edited) != release.content_hash


def test_a_hash_stored_in_format_1_stays_verifiable(frozen):
    """A release frozen before format 2 has no stored format and a format-1 hash: it still
    verifies, from its rows and from an export of the time (lines without the format)."""
    _, release = frozen
    pairs = [(i.public_id, i.content_hash) for i in release.items.all()]
    legacy = Release.objects.get(pk=release.pk)
    legacy.hash_format = None
    legacy.content_hash = content.release_hash(pairs)
    assert content.release_hash_format(legacy) == content.FORMAT_V1
    assert content.verify(legacy)
    legacy.content_hash = release.content_hash  # a format-2 hash read as format 1: refused
    assert not content.verify(legacy)

    old_lines = []
    for line in exports.export_jsonl(release):
        row = json.loads(line)
        row.pop("hash_format")
        row.pop("release_identity")
        old_lines.append(json.dumps(row))
    assert content.release_hash_from_lines(old_lines) == content.release_hash(pairs)


@pytest.mark.django_db(transaction=True)
def test_the_hash_format_of_a_frozen_release_cannot_change(frozen_tx):
    _, release = frozen_tx
    with pytest.raises(DatabaseError), transaction.atomic():
        Release.objects.filter(pk=release.pk).update(hash_format=None)
    assert Release.objects.get(pk=release.pk).hash_format == content.FORMAT_V2
