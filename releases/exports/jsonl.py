"""The project's own JSONL: each item's importable problem record with its full provenance, then
each reasoning question, with what a reader needs to recompute the release's hash."""

from __future__ import annotations

from collections.abc import Iterator

from evolution.exporters.jsonl import FORMAT as PROBLEM_FORMAT

from .. import content
from ..models import Release, ReleaseItem, ReleaseQuestion
from .rows import dump_line, item_tests, release_items

RELEASE_FORMAT = "benchforge-release/1"


def release_line(item: ReleaseItem, release: Release) -> dict:
    problem = {
        "format": PROBLEM_FORMAT,
        **item.record,
        "problem_set": f"{release.benchmark.slug}-v{release.version}",
        "member": True,
        "tests": item_tests(item),
    }
    return {
        "format": RELEASE_FORMAT,
        "benchmark": release.benchmark.name,
        "version": release.version,
        "release_hash": release.content_hash,
        **_hash_fields(release),
        "item_hash": item.content_hash,
        **content.item_listing(item),
        "problem": problem,
    }


def _hash_fields(release: Release) -> dict:
    """What a line needs to recompute the release's hash (content.release_hash_from_lines):
    nothing more for a format-1 release; the format and the release's identity for format 2."""
    hash_format = content.release_hash_format(release)
    if hash_format == content.FORMAT_V1:
        return {}
    cached = getattr(release, "_identity_for_export", None)
    if cached is None:
        cached = content.release_identity(release)
        release._identity_for_export = cached
    return {"hash_format": hash_format, "release_identity": cached}


def question_line(question: ReleaseQuestion, release: Release) -> dict:
    return {
        "format": RELEASE_FORMAT,
        "benchmark": release.benchmark.name,
        "version": release.version,
        "release_hash": release.content_hash,
        **_hash_fields(release),
        "item_hash": question.content_hash,
        **content.question_listing(question),
        "question": question.record,
    }


def export_jsonl(release: Release) -> Iterator[str]:
    for item in release_items(release):
        yield dump_line(release_line(item, release))
    for question in release.questions.order_by("position"):
        yield dump_line(question_line(question, release))
