"""Tags: resolving what a reviewer typed to the vocabulary (synonyms, proposals) and curating
the vocabulary.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from evolution.vocabulary import normalize_tag_key

from ..models import (
    Review,
    Tag,
    TagStatus,
    TagSynonym,
)


@transaction.atomic
def tag_vocabulary_load() -> int:
    """Add the starting vocabulary (evolution/vocabulary.py) where missing. Idempotent; returns
    the number of tags created. Migration 0002 loads the same list on a fresh database."""
    from evolution.vocabulary import VOCABULARY

    created = 0
    for name, synonyms in VOCABULARY.items():
        tag, made = Tag.objects.get_or_create(name=name, defaults={"status": TagStatus.APPROVED})
        created += made
        for key in {normalize_tag_key(name), *(normalize_tag_key(s) for s in synonyms)}:
            TagSynonym.objects.get_or_create(key=key, defaults={"tag": tag})
    return created


def _canonical(tag: Tag) -> Tag:
    seen = set()
    while tag.status == TagStatus.MERGED and tag.merged_into_id and tag.pk not in seen:
        seen.add(tag.pk)
        tag = tag.merged_into
    return tag


def tag_resolve(*, text: str, proposed_by=None) -> Tag | None:
    """The canonical tag for ``text`` ("HLD" -> heavy-light decomposition).

    Unknown text becomes a proposed tag owned by ``proposed_by`` (a curator approves or merges
    it later). Returns None for blank text.
    """
    key = normalize_tag_key(text)[:80]
    if not key:
        return None
    synonym = TagSynonym.objects.select_related("tag").filter(key=key).first()
    if synonym:
        return _canonical(synonym.tag)
    name = " ".join(text.split())[:80]
    tag, _ = Tag.objects.get_or_create(
        name=name, defaults={"status": TagStatus.PROPOSED, "proposed_by": proposed_by}
    )
    TagSynonym.objects.get_or_create(key=key, defaults={"tag": tag})
    return _canonical(tag)


def tags_resolve(*, text: str, proposed_by=None) -> list[Tag]:
    tags: dict[int, Tag] = {}
    for part in text.split(","):
        tag = tag_resolve(text=part, proposed_by=proposed_by)
        if tag is not None:
            tags.setdefault(tag.pk, tag)
    return list(tags.values())


@transaction.atomic
def tag_approve(*, tag: Tag) -> Tag:
    if tag.status != TagStatus.PROPOSED:
        raise ValidationError(f"Only a proposed tag can be approved; {tag.name!r} is {tag.status}.")
    tag.status = TagStatus.APPROVED
    tag.save(update_fields=["status"])
    return tag


@transaction.atomic
def tag_merge(*, tag: Tag, into: Tag) -> Tag:
    """Fold ``tag`` into ``into``: its spellings become synonyms, its reviews point to ``into``."""
    into = _canonical(into)
    if tag.pk == into.pk:
        raise ValidationError("A tag cannot be merged into itself.")
    if tag.status == TagStatus.MERGED:
        raise ValidationError(f"{tag.name!r} is already merged.")
    TagSynonym.objects.filter(tag=tag).update(tag=into)
    TagSynonym.objects.get_or_create(key=normalize_tag_key(tag.name)[:80], defaults={"tag": into})
    through = Review.tags.through
    for review_id in through.objects.filter(tag=tag).values_list("review_id", flat=True):
        through.objects.get_or_create(review_id=review_id, tag=into)
    through.objects.filter(tag=tag).delete()
    tag.status = TagStatus.MERGED
    tag.merged_into = into
    tag.save(update_fields=["status", "merged_into"])
    Tag.objects.filter(merged_into=tag).update(merged_into=into)
    return into
